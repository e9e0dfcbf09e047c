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

/// Who may write what in a shared space, decided the same way by every server of this module
/// (and available to a client that wants to know before it tries). Every refusal's message
/// starts with `forbidden`.
///
/// - The first mutation that writes a space that has never been written creates it, and must
///   make its author an owner (a `S/$members` record keyed by the author's user id with role
///   `owner`). A space, once created, is never claimable again.
/// - Owners write `S/$members` and the space's other collections; writers the other
///   collections; readers nothing, except that any member may delete their own members record
///   (leave).
/// - A members record's role is `owner`, `writer` or `reader`; a space always keeps an owner.
/// - Space and collection names that start with `$` are reserved (`S/$members` aside).
public enum SpaceRules {
    /// Why writing `collection` is refused for its name, nil when its name is fine.
    public static func reservedName(in collection: String) -> String? {
        guard let space = SpaceName.of(collection: collection), let local = SpaceName.local(collection: collection) else { return nil }
        if space.utf8.first == UInt8(ascii: "$") {
            return "forbidden: space names that start with $ are reserved (\(collection))"
        }
        if local.utf8.first == UInt8(ascii: "$") && local != SpaceName.members {
            return "forbidden: collection names that start with $ are reserved (\(collection))"
        }
        return nil
    }

    /// What a members record's value says.
    public enum Role: Equatable, Sendable {
        /// No record (or a deleted one).
        case none
        case role(SpaceRole)
        /// A record whose role is none of the three.
        case invalid

        public init(_ value: Record?) {
            guard let value else {
                self = .none
                return
            }
            self = SpaceRole.of(value).map(Role.role) ?? .invalid
        }
    }

    /// One record a mutation writes in the space: for a members record, its key (a user id)
    /// and its role before and after the mutation; for any other record, `membersKey` nil.
    public struct Write: Sendable {
        public var membersKey: String?
        public var before: Role
        public var after: Role

        public init(membersKey: String?, before: Role, after: Role) {
            self.membersKey = membersKey
            self.before = before
            self.after = after
        }
    }

    public enum Decision: Equatable, Sendable {
        /// Allowed; the space then has this many owners.
        case allowed(owners: Int)
        case refused(String)
    }

    /// Whether `user` may make `writes` in `space`: `created` says whether the space was ever
    /// written, `role` is the user's role before the mutation, `owners` the space's owners.
    public static func check(space: String, user: String, created: Bool, role: SpaceRole?, owners: Int,
                             writes: [Write]) -> Decision {
        let members = SpaceName.membersCollection(of: space)
        var owners = owners
        for w in writes where w.membersKey != nil {
            if w.after == .invalid {
                return .refused("forbidden: a record of \(members) needs a role owner, writer or reader")
            }
            if w.before == .role(.owner) { owners -= 1 }
            if w.after == .role(.owner) { owners += 1 }
        }
        if !created {
            guard writes.contains(where: { $0.membersKey == user && $0.after == .role(.owner) }) else {
                return .refused("forbidden: space \(space) does not exist; the mutation that creates it must make its "
                                + "author an owner (\(members)/\(user) with role owner)")
            }
        } else {
            guard let role else { return .refused("forbidden: \(user) is not a member of space \(space)") }
            for w in writes {
                if let key = w.membersKey {
                    if role == .owner || (key == user && w.after == .none) { continue }
                    return .refused("forbidden: only an owner of \(space) writes \(members) (a member may delete their "
                                    + "own record to leave)")
                }
                if role == .reader { return .refused("forbidden: \(user) is a reader of space \(space)") }
            }
        }
        guard owners >= 1 else { return .refused("forbidden: space \(space) would be left without an owner") }
        return .allowed(owners: owners)
    }
}
