import OptimistModel

/// One item of a query's `order`: a field, ascending unless `descending`.
public struct QueryOrderItem: Sendable, Equatable {
    public var field: FieldPath
    public var descending: Bool

    public init(field: FieldPath, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}

/// Which keys a query looks at, bytewise.
public enum QueryRange: Sendable, Equatable {
    /// Keys that start with these bytes.
    case prefix(Key)
    /// Keys from `from` (inclusive) up to `to` (exclusive); a nil bound is open.
    case between(from: Key?, to: Key?)

    public func contains(_ key: Key) -> Bool {
        switch self {
        case .prefix(let p): return key.hasBytePrefix(p)
        case .between(let from, let to):
            if let from, key < from { return false }
            if let to, !(key < to) { return false }
            return true
        }
    }
}

/// What one aggregate of a group computes.
public enum QueryAggregateKind: Sendable, Equatable {
    /// The number of records in the group.
    case count
    /// The sum of the field's numeric values (other values are left out; none: 0).
    case sum(FieldPath)
    /// The mean of the field's numeric values (none: null).
    case avg(FieldPath)
    /// The least present, non-null value by the total order (none: null).
    case min(FieldPath)
    /// The greatest present, non-null value by the total order (none: null).
    case max(FieldPath)

    /// The field it reads; nil for `count`.
    public var field: FieldPath? {
        switch self {
        case .count: nil
        case .sum(let f), .avg(let f), .min(let f), .max(let f): f
        }
    }

    /// As a spec writes it: `"count"`, `"sum:minutes"`, `"min:day"`...
    public var text: String {
        switch self {
        case .count: "count"
        case .sum(let f): "sum:" + f.text
        case .avg(let f): "avg:" + f.text
        case .min(let f): "min:" + f.text
        case .max(let f): "max:" + f.text
        }
    }

    /// Parses `"count"` or `"<sum|avg|min|max>:<field path>"` (the path dotted, or `$key`).
    public init(parsing text: String) throws(OptimistError) {
        try self.init(parsing: text, member: "aggregates", at: "group")
    }

    package init(parsing text: String, member: String, at location: String) throws(OptimistError) {
        if text == "count" { self = .count; return }
        let problem = "must be \"count\", \"sum:<field>\", \"avg:<field>\", \"min:<field>\" or \"max:<field>\" (got \"\(text)\")"
        guard let colon = text.firstIndex(of: ":") else { throw QuerySpecError.invalid(member, at: location, problem) }
        let function = text[..<colon]
        let path = String(text[text.index(after: colon)...])
        guard !path.isEmpty, let make = Self.functions[String(function)] else {
            throw QuerySpecError.invalid(member, at: location, problem)
        }
        self = make(try FieldPath(parsing: .string(path), member: member, at: location))
    }

    private static let functions: [String: @Sendable (FieldPath) -> QueryAggregateKind] = [
        "sum": { .sum($0) }, "avg": { .avg($0) }, "min": { .min($0) }, "max": { .max($0) },
    ]
}

/// One named aggregate of a group row: `"total": "sum:minutes"`.
public struct QueryAggregate: Sendable, Equatable {
    public var name: String
    public var kind: QueryAggregateKind

    public init(name: String, kind: QueryAggregateKind) {
        self.name = name
        self.kind = kind
    }
}

/// A query's `group`: one row per distinct tuple of `by` values, with its aggregates.
public struct QueryGroup: Sendable, Equatable {
    public var by: [FieldPath]
    /// Sorted bytewise by name (the order a row writes them in).
    public var aggregates: [QueryAggregate]

    /// Sorts `aggregates` by name; ``QuerySpec/init(collection:range:predicate:order:limit:group:)``
    /// checks the rest.
    public init(by: [FieldPath], aggregates: [QueryAggregate] = []) {
        self.by = by
        self.aggregates = aggregates.sorted { compareBytes($0.name, $1.name) < 0 }
    }
}

/// A query: which records of a collection (range and `where`), in what order, how many, or
/// their groups. Built from the JSON spec (``init(parsing:)-(JSON)``) or in Swift; either way
/// checked, so a value of this type is a valid query.
public struct QuerySpec: Sendable, Equatable {
    public var collection: Key
    public var range: QueryRange?
    public var predicate: QueryPredicate?
    /// Empty: key order. Rows tie-break by key ascending whatever the order.
    public var order: [QueryOrderItem]
    /// The most rows (or groups) the result holds; nil: all.
    public var limit: Int?
    public var group: QueryGroup?

    /// A checked spec: `limit` at least 1, no `order` with `group` (groups come in ascending
    /// order of their `by` tuple), a group's `by` not empty and without repeated paths, its
    /// aggregate names distinct. The group's aggregates are sorted by name.
    public init(collection: Key, range: QueryRange? = nil, predicate: QueryPredicate? = nil,
                order: [QueryOrderItem] = [], limit: Int? = nil, group: QueryGroup? = nil) throws(OptimistError) {
        if let limit, limit < 1 { throw QuerySpecError.invalid("limit", at: "", "must be an integer of at least 1") }
        if var group {
            if !order.isEmpty {
                throw QuerySpecError.invalid("order", at: "", "cannot be used with \"group\" (groups come in ascending order of \"by\")")
            }
            if group.by.isEmpty { throw QuerySpecError.invalid("by", at: "group", "must name at least one field") }
            var seen = Set<String>()
            for path in group.by where !seen.insert(path.text).inserted {
                // A group row names each value by its path: two alike would be one name.
                throw QuerySpecError.invalid("by", at: "group", "names \"\(path.text)\" twice")
            }
            group.aggregates.sort { compareBytes($0.name, $1.name) < 0 }
            for i in group.aggregates.indices.dropFirst() where compareBytes(group.aggregates[i - 1].name, group.aggregates[i].name) == 0 {
                throw QuerySpecError.invalid("aggregates", at: "group", "names \"\(group.aggregates[i].name)\" twice")
            }
            self.group = group
        } else {
            self.group = nil
        }
        self.collection = collection
        self.range = range
        self.predicate = predicate
        self.order = order
        self.limit = limit
    }

    /// Whether `key`, with its visible `record` and `status`, belongs to the result: inside
    /// the range and passing the predicate (the collection is the caller's to check).
    public func matches(key: Key, record: Record, status: RecordStatus) -> Bool {
        if let range, !range.contains(key) { return false }
        if let predicate { return predicate.matches(record, key: key, status: status) }
        return true
    }

    /// A record row's sort values: one per order item, nil where the field is missing.
    public func sortValues(_ record: Record, key: Key) -> [JSON?] {
        order.map { $0.field.value(in: record, key: key) }
    }

    /// Compares two record rows by their ``sortValues(_:key:)``, each item in its direction,
    /// then by key ascending (bytewise), so two distinct rows never tie. Returns -1, 0 or 1.
    public func compareRows(_ a: (values: [JSON?], key: Key), _ b: (values: [JSON?], key: Key)) -> Int {
        for i in order.indices {
            let c = QueryOrder.compare(i < a.values.count ? a.values[i] : nil, i < b.values.count ? b.values[i] : nil)
            if c != 0 { return (c < 0) != order[i].descending ? -1 : 1 }
        }
        let c = compareBytes(a.key.string, b.key.string)
        return c < 0 ? -1 : (c > 0 ? 1 : 0)
    }

    /// A record's group tuple: one value per `by` path, a missing field as null (missing and
    /// null are one group). Empty without a group.
    public func groupValues(_ record: Record, key: Key) -> [JSON] {
        guard let group else { return [] }
        return group.by.map { $0.value(in: record, key: key) ?? .null }
    }

    /// Group tuples in ascending order: element by element with ``QueryOrder/compare(_:_:)``,
    /// a shorter tuple first on a common prefix. Returns -1, 0 or 1.
    public static func compareGroups(_ a: [JSON], _ b: [JSON]) -> Int {
        for i in 0..<Swift.min(a.count, b.count) {
            let c = QueryOrder.compare(a[i], b[i])
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether the predicate reads the record's status (a status change alone can then move
    /// a record into or out of the result).
    public var readsStatus: Bool { predicate?.readsStatus ?? false }
}
