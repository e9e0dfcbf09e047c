import OptimistModel

/// A path to a value inside a record: member names from the outside in, or `$key`, the
/// record's key (which is not a member of the record).
///
/// Written as a string of names joined by `.` (`"meta.tags"`), or as a JSON array of names
/// (`["a.b", "c"]`) for names that contain a dot. In the array form every element is a name
/// as it is, so `["$key"]` is a member called `$key`, not the key.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
    /// Member names, outermost first; empty when ``isKey``.
    public let names: [Key]
    /// Whether this is `$key`: the record's key.
    public let isKey: Bool
    /// The path as written, dotted (an array form's names joined with `.`): how a group row
    /// names the value, and how error messages quote it.
    public let text: String

    public var description: String { text }

    /// A dotted path for Swift callers: `"$key"` is the key, anything else is split at each
    /// `.` (a name with a dot in it needs ``init(names:)``).
    public init(_ dotted: String) {
        if dotted == "$key" {
            names = []
            isKey = true
        } else {
            names = dotted.split(separator: ".", omittingEmptySubsequences: false).map { Key(String($0)) }
            isKey = false
        }
        text = dotted
    }

    /// A path of member names taken as they are (dots and `$key` included).
    public init(names: [Key]) {
        self.names = names
        isKey = false
        text = names.map(\.string).joined(separator: ".")
    }

    /// The key path: `$key`.
    public static let key = FieldPath("$key")

    /// Parses a path as a query spec writes it: a non-empty string (dotted, no empty name) or
    /// a non-empty array of strings. `member` names the spec member that holds it, for errors.
    public init(parsing json: JSON) throws(OptimistError) {
        try self.init(parsing: json, member: "field")
    }

    package init(parsing json: JSON, member: String, at location: String = "") throws(OptimistError) {
        switch json {
        case .string(let s):
            guard s == "$key" || !s.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
                // An empty name is almost surely a typo ("a..b", "a."); the array form can
                // still name an empty member.
                throw QuerySpecError.invalid(member, at: location, "must be a field path without empty names (got \"\(s)\")")
            }
            self.init(s)
        case .array(let items):
            guard !items.isEmpty else {
                throw QuerySpecError.invalid(member, at: location, "must be a field path: an array of at least one name")
            }
            var names: [Key] = []
            names.reserveCapacity(items.count)
            for item in items {
                guard case .string(let name) = item else {
                    throw QuerySpecError.invalid(member, at: location, "must be a field path: an array of strings")
                }
                names.append(Key(name))
            }
            self.init(names: names)
        default:
            throw QuerySpecError.invalid(member, at: location, "must be a field path: a string or an array of strings")
        }
    }

    /// The value at this path in `record` (the key as a string for `$key`); nil when a member
    /// along the way is missing or is not an object.
    public func value(in record: Record, key: Key) -> JSON? {
        if isKey { return .string(key.string) }
        guard let first = names.first, var value = record[first] else { return nil }
        for name in names.dropFirst() {
            guard case .object(let members) = value, let next = members[name] else { return nil }
            value = next
        }
        return value
    }
}

/// Builds the `.invalid` errors of spec parsing, all worded alike: the offending member in
/// quotes first (the innermost one), then where it is when it is not at the top level.
enum QuerySpecError {
    /// `member` may end in an index (`or[1]`, `order[0]`): the name is quoted, the index
    /// follows it (`"or"[1]`), so the message quotes the member's name as the spec has it.
    static func invalid(_ member: String, at location: String, _ problem: String) -> OptimistError {
        let place = location.isEmpty ? "" : " (in \(location))"
        var name = Substring(member), index = Substring("")
        if member.hasSuffix("]"), let open = member.firstIndex(of: "["), open != member.startIndex {
            name = member[..<open]
            index = member[open...]
        }
        return .invalid("query spec: \"\(name)\"\(index)\(place) \(problem)")
    }
}
