import OptimistModel

/// What the sync logic (Sync.swift) needs from a database. SQLite and PostgreSQL implement it;
/// the push and pull algorithms are written once against it, so both stores behave alike.
protocol Storage: Sendable {
    /// Runs `body` in one write transaction and commits when it returns (rolls back when it
    /// throws). The body must lock the spaces it writes (``StoreTransaction/lockSpace(_:)``) first.
    func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R
    /// Runs `body` in one read-only transaction that sees one consistent snapshot.
    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R
    /// Whether the database answers (for `GET /health`).
    func ping() async throws
    /// Whether ``StoreTransaction/announce(_:)`` reaches every process, this one included (then
    /// a process learns of its own pushes' changes from the database, like of anyone's).
    var announcesChanges: Bool { get }
}

/// One transaction. Records live in spaces (``SpaceID``): a user's private space, or a shared
/// one whose members the `members` table lists; outcomes belong to a user. Every error a method
/// throws is a ``StorageError``.
protocol StoreTransaction {
    /// Creates the space's row if missing and locks it until the transaction ends; the lock
    /// serializes every write of one space, across server processes. Returns its seq. A push
    /// locks its user's private space first, then the shared spaces it writes in the order of
    /// their ids, so that two pushes never wait for each other in a cycle.
    func lockSpace(_ space: SpaceID) async throws -> Int64
    /// The space's seq and pruning horizon (zeros for a space that has no row).
    func space(_ space: SpaceID) async throws -> SpaceState
    func setSpaceSeq(_ space: SpaceID, seq: Int64) async throws
    /// The database's identity, chosen at random when its schema was created.
    func identity() async throws -> String

    /// The shared spaces `user` is a member of, with their state, in the order of their names.
    func memberships(user: String) async throws -> [Membership]
    /// The number of members of a shared space whose role is owner.
    func ownerCount(space: String) async throws -> Int
    /// Records (or, with a nil role, removes) one member of a shared space; the push calls it
    /// with each write of `S/$members`, so that ``memberships(user:)`` finds a user's spaces
    /// without reading every space.
    func saveMember(space: String, user: String, role: String?) async throws

    /// Opens the savepoint that one mutation's writes go under, so that a write the database
    /// refuses (``StorageError/refused(_:)``) undoes that mutation alone. One at a time:
    /// ``releaseSavepoint()`` or ``rollbackToSavepoint()`` closes it.
    func savepoint() async throws
    func releaseSavepoint() async throws
    /// Undoes everything since ``savepoint()`` and closes it; the transaction goes on.
    func rollbackToSavepoint() async throws

    /// The stored row of a record (a tombstone has a nil value), nil when there is none.
    func record(_ space: SpaceID, coll: String, key: String) async throws -> StoredRecord?
    func saveRecord(_ space: SpaceID, coll: String, key: String, _ record: StoredRecord) async throws

    /// The stored rows of many records at once (a push reads every record it touches in one
    /// go); records without a row are left out.
    func records(_ refs: [RecordRef]) async throws -> [RecordRef: StoredRecord]
    /// Writes many records at once, each ref at most once.
    func saveRecords(_ rows: [(RecordRef, StoredRecord)]) async throws
    /// Writes many outcomes of one client at once, each id at most once.
    func saveOutcomes(user: String, clientID: String, _ outcomes: [StoredOutcome]) async throws

    /// Recorded outcomes of the given mutation ids of one client.
    func outcomes(user: String, clientID: String, ids: [Int64]) async throws -> [StoredOutcome]
    func saveOutcome(user: String, clientID: String, _ outcome: StoredOutcome) async throws

    /// The sizes of the writes after seq `after`, one entry per seq, in seq order, at most
    /// `limit` of them: what a pull decides its page's extent from without reading values.
    func changeGroups(_ space: SpaceID, after: Int64, limit: Int) async throws -> [ChangeGroup]
    /// Rows with `after` < seq <= `through`, in seq order (then coll, key).
    func changes(_ space: SpaceID, after: Int64, through: Int64) async throws -> [StoredChange]

    /// A space with a tombstone written before `before` (milliseconds since 1970), nil when
    /// there is none.
    func spaceWithPrunableTombstones(before: Int64) async throws -> SpaceID?
    /// A user with an outcome written before `before`, nil when there is none.
    func userWithPrunableOutcomes(before: Int64) async throws -> String?
    /// Removes at most `limit` of the space's tombstones written before `before`, raises its
    /// pruned seq to the highest seq removed, and returns how many went. Call with the space
    /// locked.
    func pruneTombstones(_ space: SpaceID, before: Int64, limit: Int) async throws -> Int
    /// Tells every server process on the database what this transaction changed, when it
    /// commits (PostgreSQL: NOTIFY, which is transactional). A storage that cannot reach other
    /// processes does nothing: the process that pushed pokes its own streams.
    func announce(_ changes: SpaceChanges) async throws

    /// Every member of a shared space (user ids).
    func memberUsers(space: String) async throws -> [String]

    /// Removes at most `limit` of the user's outcomes written before `before`, raises their
    /// private space's pruned seq to the highest seq removed, and returns how many went. Call
    /// with the private space locked.
    func pruneOutcomes(user: String, before: Int64, limit: Int) async throws -> Int
}

/// A space as the tables name it: `u:` and the user id for a private space, `s:` and the name
/// for a shared one, so that no user id and no space name can ever meet in one row.
struct SpaceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let key: String

    init(key: String) { self.key = key }
    static func user(_ user: String) -> SpaceID { SpaceID(key: "u:" + user) }
    static func shared(_ name: String) -> SpaceID { SpaceID(key: "s:" + name) }

    /// The private space's user, nil for a shared space.
    var privateUser: String? { key.utf8.starts(with: "u:".utf8) ? String(decoding: key.utf8.dropFirst(2), as: UTF8.self) : nil }
    /// The shared space's name, nil for a private space.
    var sharedName: String? { key.utf8.starts(with: "s:".utf8) ? String(decoding: key.utf8.dropFirst(2), as: UTF8.self) : nil }
    var isShared: Bool { sharedName != nil }

    // Bytewise, as the database orders them: every process locks in the same order.
    static func < (a: SpaceID, b: SpaceID) -> Bool { a.key.utf8.lexicographicallyPrecedes(b.key.utf8) }
    var description: String { key }
}

/// Where a record lives: its space, collection and key.
struct RecordRef: Hashable, Sendable {
    let space: SpaceID
    // Keys compare bytewise (String would fold "é" and "e\u{301}" together; the database
    // does not).
    let coll: Key
    let key: Key
}

extension StoreTransaction {
    // One statement per row: what an in-process database (SQLite) does at no cost.
    func records(_ refs: [RecordRef]) async throws -> [RecordRef: StoredRecord] {
        var found = [RecordRef: StoredRecord]()
        for ref in refs {
            if let row = try await record(ref.space, coll: ref.coll.string, key: ref.key.string) { found[ref] = row }
        }
        return found
    }

    func saveRecords(_ rows: [(RecordRef, StoredRecord)]) async throws {
        for (ref, row) in rows { try await saveRecord(ref.space, coll: ref.coll.string, key: ref.key.string, row) }
    }

    func saveOutcomes(user: String, clientID: String, _ outcomes: [StoredOutcome]) async throws {
        for o in outcomes { try await saveOutcome(user: user, clientID: clientID, o) }
    }
}

/// A shared space a user is a member of.
struct Membership: Sendable {
    var name: String
    var role: String
    var state: SpaceState
}

/// A space as a pull sees it.
struct SpaceState: Sendable {
    /// The seq of the space's last write (0 when nobody ever wrote in it).
    var seq: Int64
    /// The highest seq of a tombstone or outcome pruned from the space (0: none): a client
    /// whose cursor is below it may have missed a delete, and starts over.
    var prunedSeq: Int64
}

/// A row of `records`. `value` is canonical JSON text of the record, nil for a tombstone.
struct StoredRecord: Sendable {
    var value: String?
    var version: Int64
    var seq: Int64
    /// The bytes of the record as a pulled change (``ChangeSize``), kept so that a pull sizes
    /// its page without reading values.
    var changeBytes: Int64 = 0
    /// When it was written, in milliseconds since 1970 (tombstones are pruned by it).
    var writtenAt: Int64 = 0
}

/// A row of `records` as the change log sees it.
struct StoredChange: Sendable {
    var coll: String
    var key: String
    var value: String?
    var seq: Int64
}

/// The writes of one seq (one mutation): how many records, and their bytes as pulled changes.
struct ChangeGroup: Sendable {
    var seq: Int64
    var count: Int
    var bytes: Int64
}

/// A row of `outcomes`.
struct StoredOutcome: Sendable {
    enum Status: String, Sendable { case ok, rejected }
    var mutationID: Int64
    var status: Status
    var retry: Int64
    var error: String?
    var seq: Int64
    /// The ``OpsDigest`` of the mutation's ops; nil in rows written before digests were kept
    /// (they match any ops).
    var digest: String?
    var writtenAt: Int64 = 0
}

/// A database failure, sorted by what the server should do about it.
enum StorageError: Error, CustomStringConvertible {
    /// Worth retrying soon (SQLite busy, a PostgreSQL serialization failure, deadlock or lost
    /// connection): the request is answered 503 with Retry-After.
    case transient(String)
    /// The database refused what was written (a value or key it cannot hold, a constraint, an
    /// index entry over its size): the fault of one mutation's content, which is rejected.
    case refused(String)
    /// Anything else: 500.
    case failed(String)

    var description: String {
        switch self {
        case .transient(let m), .refused(let m), .failed(let m): m
        }
    }
}
