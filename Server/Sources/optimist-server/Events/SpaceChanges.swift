import OptimistModel

/// What a push changed, as real time needs it: the spaces it wrote, and the users whose
/// membership of a space it changed (a removed member is no longer among the space's members,
/// yet must hear of it to pull the `drop`).
struct SpaceChanges: Sendable, Equatable {
    var spaces = Set<SpaceID>()
    var users = Set<String>()

    var isEmpty: Bool { spaces.isEmpty && users.isEmpty }

    mutating func merge(_ other: SpaceChanges) {
        spaces.formUnion(other.spaces)
        users.formUnion(other.users)
    }

    /// The changes as NOTIFY payloads: JSON arrays of `u:USER`/`s:SPACE` (space ids) and
    /// `m:USER` (a member changed), each under PostgreSQL's 8000-byte payload limit.
    func payloads(limit: Int = 7000) -> [String] {
        var out = [String]()
        var items = [JSON]()
        var bytes = 2
        let all = spaces.map(\.key).sorted() + users.sorted().map { "m:" + $0 }
        for item in all {
            let size = JSONWriter.string(.string(item)).utf8.count + 1
            if !items.isEmpty && bytes + size > limit {
                out.append(JSONWriter.string(.array(items)))
                items = []
                bytes = 2
            }
            items.append(.string(item))
            bytes += size
        }
        if !items.isEmpty { out.append(JSONWriter.string(.array(items))) }
        return out
    }

    /// A payload back; nil for one this server did not write (it is then ignored).
    init?(payload: String) {
        guard case .array(let items)? = try? JSONParser.parse(payload) else { return nil }
        for item in items {
            guard case .string(let text) = item else { return nil }
            if text.utf8.starts(with: "m:".utf8) {
                users.insert(String(decoding: text.utf8.dropFirst(2), as: UTF8.self))
            } else if text.utf8.starts(with: "u:".utf8) || text.utf8.starts(with: "s:".utf8) {
                spaces.insert(SpaceID(key: text))
            } else {
                return nil
            }
        }
    }

    init(spaces: Set<SpaceID> = [], users: Set<String> = []) {
        self.spaces = spaces
        self.users = users
    }
}
