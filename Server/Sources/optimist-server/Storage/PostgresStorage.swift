import Logging
import PostgresNIO
import Synchronization

/// The store for deployments that outgrow one machine: any number of server processes share
/// one PostgreSQL database. Correctness across processes rests on one row lock per user: a
/// push first locks its user's `spaces` row (`SELECT ... FOR UPDATE`), so one user's writes
/// are serialized (exactly once, per-client order, gap-free seqs) while different users'
/// pushes run in parallel. Pushes run at READ COMMITTED: every statement after the lock sees
/// what the previous holder committed. Pulls run at REPEATABLE READ: one snapshot.
final class PostgresStorage: Storage {
    static let schemaVersion: Int32 = 1

    /// The connection pool; it runs as a service of the application (see Main.swift).
    let client: PostgresClient
    private let logger: Logger

    /// `statementTimeoutMs`: PostgreSQL's `statement_timeout`, sent as a start-up parameter of
    /// every pooled connection, so that no statement (a lock wait included) holds a connection
    /// of the pool longer than that; the request then fails (500) and its transaction rolls back.
    init(configuration: PostgresClient.Configuration, statementTimeoutMs: Int = 30_000, logger: Logger) {
        var configuration = configuration
        configuration.options.maximumConnections = 16
        configuration.options.additionalStartupParameters.append(("statement_timeout", String(statementTimeoutMs)))
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Creates or upgrades the schema. Several processes may start at once: a transaction-wide
    /// advisory lock lets one of them do it while the others wait and then find it done.
    func migrate() async throws {
        do {
            try await leased(waitingAtMost: .seconds(30)) { [self] conn in
                try await self.transaction(conn, begin: "BEGIN") {
                    try await conn.query("SELECT pg_advisory_xact_lock(7262011)", logger: logger)
                    try await conn.query("CREATE TABLE IF NOT EXISTS optimist_schema (version INTEGER NOT NULL)", logger: logger)
                    var version: Int32 = 0
                    for try await v in try await conn.query("SELECT max(version) FROM optimist_schema", logger: logger).decode(Int32?.self) {
                        version = v ?? 0
                    }
                    if version > Self.schemaVersion {
                        throw StorageError.failed("the database has schema version \(version); this server knows \(Self.schemaVersion) (upgrade the server)")
                    }
                    if version < 1 {
                        // COLLATE "C": keys compare bytewise, as the client compares them.
                        try await conn.query("""
                            CREATE TABLE spaces (
                                user_id TEXT COLLATE "C" PRIMARY KEY,
                                seq BIGINT NOT NULL)
                            """, logger: logger)
                        try await conn.query("""
                            CREATE TABLE records (
                                user_id TEXT COLLATE "C" NOT NULL, coll TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
                                value TEXT,
                                version BIGINT NOT NULL,
                                seq BIGINT NOT NULL,
                                PRIMARY KEY (user_id, coll, key))
                            """, logger: logger)
                        try await conn.query("CREATE INDEX records_by_seq ON records (user_id, seq)", logger: logger)
                        try await conn.query("""
                            CREATE TABLE outcomes (
                                user_id TEXT COLLATE "C" NOT NULL, client_id TEXT COLLATE "C" NOT NULL, mutation_id BIGINT NOT NULL,
                                status TEXT NOT NULL,
                                retry BIGINT NOT NULL,
                                error TEXT,
                                seq BIGINT NOT NULL,
                                PRIMARY KEY (user_id, client_id, mutation_id))
                            """, logger: logger)
                        try await conn.query("INSERT INTO optimist_schema (version) VALUES (1)", logger: logger)
                    }
                    // Later versions migrate here, one step at a time.
                }
            }
        } catch {
            throw Self.classify(error)
        }
    }

    func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R {
        do {
            return try await leased { conn in
                try await self.transaction(conn, begin: "BEGIN ISOLATION LEVEL READ COMMITTED") {
                    try await body(PostgresTransaction(conn: conn, logger: self.logger))
                }
            }
        } catch {
            throw Self.classify(error)
        }
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R {
        do {
            return try await leased { conn in
                try await self.transaction(conn, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                    try await body(PostgresTransaction(conn: conn, logger: self.logger))
                }
            }
        } catch {
            throw Self.classify(error)
        }
    }

    func ping() async throws {
        do {
            try await leased { conn in _ = try await conn.query("SELECT 1", logger: self.logger) }
        } catch {
            throw Self.classify(error)
        }
    }

    /// Runs `body` with a pooled connection, giving up (transient) when none comes within
    /// `limit`. Without that bound a request would wait while the pool retries a database that
    /// is down (up to a minute before its circuit breaker trips): the client had better hear 503
    /// and back off. Once `body` has its connection it runs to the end.
    private func leased<R: Sendable>(waitingAtMost limit: Duration = .seconds(5),
                                     _ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let started = LeaseFlag()
        let client = self.client
        return try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask {
                try await client.withConnection { conn in
                    started.value.store(true, ordering: .sequentiallyConsistent)
                    return try await body(conn)
                }
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            while let result = try await group.next() {
                if let result {
                    group.cancelAll()
                    return result
                }
                if !started.value.load(ordering: .sequentiallyConsistent) {
                    group.cancelAll()
                    throw StorageError.transient("no database connection within \(limit)")
                }
            }
            throw StorageError.failed("the connection task ended without a result")
        }
    }

    nonisolated(nonsending) private func transaction<R>(_ conn: PostgresConnection, begin: PostgresQuery, _ body: () async throws -> R) async throws -> R {
        try await conn.query(begin, logger: logger)
        do {
            let result = try await body()
            try await conn.query("COMMIT", logger: logger)
            return result
        } catch {
            _ = try? await conn.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Sorts a failure into transient (the client retries soon) or not.
    static func classify(_ error: any Error) -> StorageError {
        if let e = error as? StorageError { return e }
        if let e = error as? PSQLError {
            guard e.code == .server, let state = e.serverInfo?[.sqlState] else {
                // The connection broke or could not be made: the database may be back soon.
                return .transient("PostgreSQL unavailable: \(String(reflecting: e))")
            }
            let message = "PostgreSQL \(state): \(e.serverInfo?[.message] ?? "")"
            // 40: serialization failure, deadlock; 08: connection; 53: out of resources;
            // 57P: the server is shutting down or restarting; 57014: statement_timeout ran out
            // (a lock held too long, a database overloaded).
            if state.hasPrefix("40") || state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "57014" {
                return .transient(message)
            }
            return .failed(message)
        }
        // Pool and channel errors: the database could not be reached.
        return .transient("PostgreSQL unavailable: \(error)")
    }
}

private final class LeaseFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// The SQL of one transaction on a PostgreSQL connection.
private struct PostgresTransaction: StoreTransaction {
    let conn: PostgresConnection
    let logger: Logger

    func lockSpace(user: String) async throws -> Int64 {
        try await conn.query("INSERT INTO spaces (user_id, seq) VALUES (\(user), 0) ON CONFLICT DO NOTHING", logger: logger)
        // The lock that serializes this user's writes across every server process.
        var seq: Int64?
        for try await s in try await conn.query("SELECT seq FROM spaces WHERE user_id = \(user) FOR UPDATE", logger: logger).decode(Int64.self) {
            seq = s
        }
        guard let seq else { throw StorageError.failed("the space row of \(user) vanished") }
        return seq
    }

    func spaceSeq(user: String) async throws -> Int64 {
        var seq: Int64 = 0
        for try await s in try await conn.query("SELECT seq FROM spaces WHERE user_id = \(user)", logger: logger).decode(Int64.self) {
            seq = s
        }
        return seq
    }

    func setSpaceSeq(user: String, seq: Int64) async throws {
        try await conn.query("UPDATE spaces SET seq = \(seq) WHERE user_id = \(user)", logger: logger)
    }

    func record(user: String, coll: String, key: String) async throws -> StoredRecord? {
        let rows = try await conn.query("""
            SELECT value, version, seq FROM records WHERE user_id = \(user) AND coll = \(coll) AND key = \(key)
            """, logger: logger)
        var found: StoredRecord?
        for try await (value, version, seq) in rows.decode((String?, Int64, Int64).self) {
            found = StoredRecord(value: value, version: version, seq: seq)
        }
        return found
    }

    func saveRecord(user: String, coll: String, key: String, _ record: StoredRecord) async throws {
        try await conn.query("""
            INSERT INTO records (user_id, coll, key, value, version, seq)
            VALUES (\(user), \(coll), \(key), \(record.value), \(record.version), \(record.seq))
            ON CONFLICT (user_id, coll, key) DO UPDATE SET value = excluded.value, version = excluded.version, seq = excluded.seq
            """, logger: logger)
    }

    func outcomes(user: String, clientID: String, ids: [Int64]) async throws -> [StoredOutcome] {
        let rows = try await conn.query("""
            SELECT mutation_id, status, retry, error, seq FROM outcomes
            WHERE user_id = \(user) AND client_id = \(clientID) AND mutation_id = ANY(\(ids))
            """, logger: logger)
        var found = [StoredOutcome]()
        for try await (id, status, retry, error, seq) in rows.decode((Int64, String, Int64, String?, Int64).self) {
            found.append(try outcome(id, status: status, retry: retry, error: error, seq: seq))
        }
        return found
    }

    func saveOutcome(user: String, clientID: String, _ o: StoredOutcome) async throws {
        try await conn.query("""
            INSERT INTO outcomes (user_id, client_id, mutation_id, status, retry, error, seq)
            VALUES (\(user), \(clientID), \(o.mutationID), \(o.status.rawValue), \(o.retry), \(o.error), \(o.seq))
            ON CONFLICT (user_id, client_id, mutation_id) DO UPDATE SET
                status = excluded.status, retry = excluded.retry, error = excluded.error, seq = excluded.seq
            """, logger: logger)
    }

    func changes(user: String, after: Int64, limit: Int) async throws -> [StoredChange] {
        let rows = try await conn.query("""
            SELECT coll, key, value, seq FROM records WHERE user_id = \(user) AND seq > \(after)
            ORDER BY seq, coll, key LIMIT \(Int64(limit))
            """, logger: logger)
        return try await collect(rows)
    }

    func changes(user: String, at seq: Int64) async throws -> [StoredChange] {
        let rows = try await conn.query("""
            SELECT coll, key, value, seq FROM records WHERE user_id = \(user) AND seq = \(seq) ORDER BY coll, key
            """, logger: logger)
        return try await collect(rows)
    }

    private func collect(_ rows: PostgresRowSequence) async throws -> [StoredChange] {
        var out = [StoredChange]()
        for try await (coll, key, value, seq) in rows.decode((String, String, String?, Int64).self) {
            out.append(StoredChange(coll: coll, key: key, value: value, seq: seq))
        }
        return out
    }
}
