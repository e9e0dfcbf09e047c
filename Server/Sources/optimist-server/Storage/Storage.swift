/// What the sync logic (Sync.swift) needs from a database. SQLite and PostgreSQL implement it;
/// the push and pull algorithms are written once against it, so both stores behave alike.
protocol Storage: Sendable {
    /// Runs `body` in one write transaction and commits when it returns (rolls back when it
    /// throws). The body must call ``StoreTransaction/lockSpace(user:)`` first.
    func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R
    /// Runs `body` in one read-only transaction that sees one consistent snapshot.
    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R
    /// Whether the database answers (for `GET /health`).
    func ping() async throws
}

/// One transaction. Everything is keyed by user: a method never reaches another user's rows.
protocol StoreTransaction {
    /// Creates the user's space row if missing and locks it until the transaction ends; the
    /// lock serializes every write of one user, across server processes. Returns its seq.
    func lockSpace(user: String) async throws -> Int64
    /// The space's seq (0 when the user never wrote).
    func spaceSeq(user: String) async throws -> Int64
    func setSpaceSeq(user: String, seq: Int64) async throws

    /// The stored row of a record (a tombstone has a nil value), nil when there is none.
    func record(user: String, coll: String, key: String) async throws -> StoredRecord?
    func saveRecord(user: String, coll: String, key: String, _ record: StoredRecord) async throws

    /// Recorded outcomes of the given mutation ids of one client.
    func outcomes(user: String, clientID: String, ids: [Int64]) async throws -> [StoredOutcome]
    func saveOutcome(user: String, clientID: String, _ outcome: StoredOutcome) async throws

    /// Rows with seq > `after`, in seq order (then coll, key), at most `limit` of them.
    func changes(user: String, after: Int64, limit: Int) async throws -> [StoredChange]
    /// Every row written at exactly `seq` (one mutation's writes share a seq).
    func changes(user: String, at seq: Int64) async throws -> [StoredChange]
}

/// A row of `records`. `value` is canonical JSON text of the record, nil for a tombstone.
struct StoredRecord: Sendable {
    var value: String?
    var version: Int64
    var seq: Int64
}

/// A row of `records` as the change log sees it.
struct StoredChange: Sendable {
    var coll: String
    var key: String
    var value: String?
    var seq: Int64
}

/// A row of `outcomes`.
struct StoredOutcome: Sendable {
    enum Status: String, Sendable { case ok, rejected }
    var mutationID: Int64
    var status: Status
    var retry: Int64
    var error: String?
    var seq: Int64
}

/// A database failure, sorted by what the client should do about it.
enum StorageError: Error, CustomStringConvertible {
    /// Worth retrying soon (SQLite busy, a PostgreSQL serialization failure, deadlock or lost
    /// connection): the request is answered 503 with Retry-After.
    case transient(String)
    /// Anything else: 500.
    case failed(String)

    var description: String {
        switch self {
        case .transient(let m), .failed(let m): m
        }
    }
}
