import OptimistModel

/// A `where` condition over one record: its visible value, its key and its status.
public indirect enum QueryPredicate: Sendable, Equatable {
    /// `{"field": F, "eq"|"ne"|"lt"|"le"|"gt"|"ge": V}`.
    case compare(FieldPath, Comparison, JSON)
    /// `{"field": F, "in": [V, ...]}`: equal to one of the values.
    case isIn(FieldPath, [JSON])
    /// `{"field": F, "prefix": "text"}`: a string that starts with these bytes.
    case prefix(FieldPath, String)
    /// `{"field": F, "exists": true|false}`: whether the field is present (`null` is present).
    case exists(FieldPath, Bool)
    /// `{"and": [P, ...]}`: all of them (an empty list: true).
    case and([QueryPredicate])
    /// `{"or": [P, ...]}`: any of them (an empty list: false).
    case or([QueryPredicate])
    /// `{"not": P}`.
    case not(QueryPredicate)
    /// `{"status": "confirmed" | "pending" | "failed"}`: the record's status.
    case status(RecordStatus)

    public enum Comparison: String, Sendable, CaseIterable {
        case eq, ne, lt, le, gt, ge
    }

    /// Whether the record passes. `eq`, `ne` and `in` use JSON equality
    /// (``QueryOrder/equal(_:_:)``); `lt`, `le`, `gt`, `ge` hold only between two numbers, two
    /// strings (bytewise) or two booleans, and are false for any other pair (null, arrays,
    /// objects, mixed kinds); `prefix` is false on a value that is not a string. A missing
    /// field fails every test except `exists: false` and `ne`, which it passes; `not` inverts.
    public func matches(_ record: Record, key: Key, status: RecordStatus) -> Bool {
        switch self {
        case .compare(let path, let op, let operand):
            guard let value = path.value(in: record, key: key) else { return op == .ne }
            switch op {
            case .eq: return QueryOrder.equal(value, operand)
            case .ne: return !QueryOrder.equal(value, operand)
            case .lt, .le, .gt, .ge:
                guard let c = Self.orderedCompare(value, operand) else { return false }
                switch op {
                case .lt: return c < 0
                case .le: return c <= 0
                case .gt: return c > 0
                default: return c >= 0
                }
            }
        case .isIn(let path, let values):
            guard let value = path.value(in: record, key: key) else { return false }
            return values.contains { QueryOrder.equal(value, $0) }
        case .prefix(let path, let prefix):
            guard case .string(let s)? = path.value(in: record, key: key) else { return false }
            // The UTF-8 views compare bytes (a Key would hash both strings first).
            return s.utf8.starts(with: prefix.utf8)
        case .exists(let path, let present):
            return (path.value(in: record, key: key) != nil) == present
        case .and(let all):
            return all.allSatisfy { $0.matches(record, key: key, status: status) }
        case .or(let any):
            return any.contains { $0.matches(record, key: key, status: status) }
        case .not(let inner):
            return !inner.matches(record, key: key, status: status)
        case .status(let wanted):
            return status == wanted
        }
    }

    /// The comparison of two values of one orderable kind (numbers, strings, booleans); nil
    /// for any other pair, where an ordering test is false.
    static func orderedCompare(_ a: JSON, _ b: JSON) -> Int? {
        switch (a, b) {
        case (.number, .number), (.string, .string), (.bool, .bool): QueryOrder.compare(a, b)
        default: nil
        }
    }

    /// Whether evaluating it reads the record's status: then a change of status alone (a
    /// commit, a kept failure) can move the record into or out of the result.
    public var readsStatus: Bool {
        switch self {
        case .status: true
        case .compare, .isIn, .prefix, .exists: false
        case .and(let list), .or(let list): list.contains { $0.readsStatus }
        case .not(let inner): inner.readsStatus
        }
    }
}
