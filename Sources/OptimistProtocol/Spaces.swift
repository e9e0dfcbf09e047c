import OptimistModel

/// Where a record lives under protocol 2: a collection named `S/NAME` (a `/` in its name, `S`
/// the non-empty part before the first one) lives in the shared space `S`; any other collection
/// in the user's own private space. Under protocol 1 every collection is private.
public enum SpaceName {
    /// The reserved collection of a space's members: `S/$members`.
    public static let members = "$members"

    /// The shared space a collection lives in, nil for a private collection.
    public static func of(collection: String) -> String? {
        let bytes = collection.utf8
        guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")), slash != bytes.startIndex else { return nil }
        return String(collection[..<slash])
    }

    /// The collection's name inside its space (what follows `S/`), nil for a private collection.
    public static func local(collection: String) -> String? {
        guard let space = of(collection: collection) else { return nil }
        return String(decoding: collection.utf8.dropFirst(space.utf8.count + 1), as: UTF8.self)
    }

    /// Whether `name` can be a space's name: non-empty, without `/`. (Names that start with `$`
    /// are valid names but reserved: nobody may write in them.)
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains(UInt8(ascii: "/"))
    }

    /// The members collection of `space`.
    public static func membersCollection(of space: String) -> String { space + "/" + members }

    /// Whether `collection` is one of the space's (its name starts with `S/`).
    public static func collection(_ collection: String, isIn space: String) -> Bool {
        of(collection: collection) == space
    }
}

/// A member's role in a shared space: the `role` of their `S/$members` record.
public enum SpaceRole: String, Sendable, CaseIterable, Comparable {
    /// Writes the members and the space's other collections.
    case owner
    /// Writes the space's collections other than its members.
    case writer
    /// Reads only.
    case reader

    /// The role a members record's value gives, nil when it gives none of the three.
    public static func of(_ value: Record?) -> SpaceRole? {
        guard case .string(let s)? = value?["role"] else { return nil }
        return SpaceRole(rawValue: s)
    }

    private var rank: Int {
        switch self {
        case .owner: 2
        case .writer: 1
        case .reader: 0
        }
    }

    public static func < (a: SpaceRole, b: SpaceRole) -> Bool { a.rank < b.rank }
}
