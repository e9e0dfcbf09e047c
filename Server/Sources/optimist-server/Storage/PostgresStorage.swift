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
    static let schemaVersion: Int32 = 2

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
                    if version < 2 {
                        try await self.migrateToVersion2(conn)
                    }
                    // Later versions migrate here, one step at a time.
                }
            }
        } catch {
            throw Self.classify(error)
        }
    }

    /// Version 2: the database's identity (cursors name it), each outcome's ops digest, when
    /// rows were written (pruning), each record's size as a pulled change (byte-bounded pages),
    /// each space's pruned seq. Rows written before count as written now (a constant default:
    /// no table rewrite); their size is estimated when a pull needs it.
    private func migrateToVersion2(_ conn: PostgresConnection) async throws {
        let now = unixMilliseconds()
        try await conn.query("CREATE TABLE optimist_meta (name TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)", logger: logger)
        let identity = Cursor.newIdentity()
        try await conn.query("INSERT INTO optimist_meta (name, value) VALUES ('identity', \(identity))", logger: logger)
        for ddl in [
            "ALTER TABLE spaces ADD COLUMN pruned_seq BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE records ADD COLUMN change_bytes BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE records ADD COLUMN written_at BIGINT NOT NULL DEFAULT \(now)",
            "ALTER TABLE outcomes ADD COLUMN digest TEXT",
            "ALTER TABLE outcomes ADD COLUMN written_at BIGINT NOT NULL DEFAULT \(now)",
            "CREATE INDEX records_tombstones_by_age ON records (written_at) WHERE value IS NULL",
            "CREATE INDEX outcomes_by_age ON outcomes (written_at)",
            "INSERT INTO optimist_schema (version) VALUES (2)",
        ] {
            // Fixed text and an integer: nothing of a request's goes in.
            try await conn.query(PostgresQuery(unsafeSQL: ddl), logger: logger)
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
            // 22: data exception (a value the column cannot hold); 23: integrity constraint;
            // 54: program limit exceeded (54000: an index entry over its largest size). What
            // was written is at fault: the mutation that wrote it is rejected.
            if state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("54") {
                return .refused(message)
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

    func space(user: String) async throws -> SpaceState {
        let rows = try await conn.query("""
            SELECT m.value, s.seq, s.pruned_seq FROM optimist_meta m LEFT JOIN spaces s ON s.user_id = \(user)
            WHERE m.name = 'identity'
            """, logger: logger)
        var state: SpaceState?
        for try await (identity, seq, pruned) in rows.decode((String, Int64?, Int64?).self) {
            state = SpaceState(seq: seq ?? 0, prunedSeq: pruned ?? 0, identity: identity)
        }
        guard let state else { throw StorageError.failed("the database has no identity (optimist_meta)") }
        return state
    }

    func setSpaceSeq(user: String, seq: Int64) async throws {
        try await conn.query("UPDATE spaces SET seq = \(seq) WHERE user_id = \(user)", logger: logger)
    }

    // One savepoint name: a push holds at most one open at a time.
    func savepoint() async throws { try await conn.query("SAVEPOINT mutation", logger: logger) }
    func releaseSavepoint() async throws { try await conn.query("RELEASE SAVEPOINT mutation", logger: logger) }
    func rollbackToSavepoint() async throws {
        // ROLLBACK TO leaves the savepoint open: release it too.
        try await conn.query("ROLLBACK TO SAVEPOINT mutation", logger: logger)
        try await conn.query("RELEASE SAVEPOINT mutation", logger: logger)
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
        try await classifying {
            _ = try await conn.query("""
                INSERT INTO records (user_id, coll, key, value, version, seq, change_bytes, written_at)
                VALUES (\(user), \(coll), \(key), \(record.value), \(record.version), \(record.seq), \(record.changeBytes),
                        \(record.writtenAt))
                ON CONFLICT (user_id, coll, key) DO UPDATE SET value = excluded.value, version = excluded.version, seq = excluded.seq,
                    change_bytes = excluded.change_bytes, written_at = excluded.written_at
                """, logger: logger)
        }
    }

    func outcomes(user: String, clientID: String, ids: [Int64]) async throws -> [StoredOutcome] {
        let rows = try await conn.query("""
            SELECT mutation_id, status, retry, error, seq, digest FROM outcomes
            WHERE user_id = \(user) AND client_id = \(clientID) AND mutation_id = ANY(\(ids))
            """, logger: logger)
        var found = [StoredOutcome]()
        for try await (id, status, retry, error, seq, digest) in rows.decode((Int64, String, Int64, String?, Int64, String?).self) {
            found.append(try outcome(id, status: status, retry: retry, error: error, seq: seq, digest: digest))
        }
        return found
    }

    func saveOutcome(user: String, clientID: String, _ o: StoredOutcome) async throws {
        try await classifying {
            _ = try await conn.query("""
                INSERT INTO outcomes (user_id, client_id, mutation_id, status, retry, error, seq, digest, written_at)
                VALUES (\(user), \(clientID), \(o.mutationID), \(o.status.rawValue), \(o.retry), \(o.error), \(o.seq), \(o.digest),
                        \(o.writtenAt))
                ON CONFLICT (user_id, client_id, mutation_id) DO UPDATE SET
                    status = excluded.status, retry = excluded.retry, error = excluded.error, seq = excluded.seq,
                    digest = excluded.digest, written_at = excluded.written_at
                """, logger: logger)
        }
    }

    func changeGroups(user: String, after: Int64, limit: Int) async throws -> [ChangeGroup] {
        // Rows written before sizes were kept (change_bytes 0) count at most what their text
        // can take as JSON: every byte of a name escaped (6), the value as it is.
        let rows = try await conn.query("""
            SELECT seq, count(*), sum(CASE WHEN change_bytes > 0 THEN change_bytes ELSE
                40 + 6 * (octet_length(coll) + octet_length(key)) + coalesce(octet_length(value), 0) END)::BIGINT
            FROM records WHERE user_id = \(user) AND seq > \(after) GROUP BY seq ORDER BY seq LIMIT \(Int64(limit))
            """, logger: logger)
        var groups = [ChangeGroup]()
        for try await (seq, count, bytes) in rows.decode((Int64, Int64, Int64).self) {
            groups.append(ChangeGroup(seq: seq, count: Int(count), bytes: bytes))
        }
        return groups
    }

    func changes(user: String, after: Int64, through: Int64) async throws -> [StoredChange] {
        let rows = try await conn.query("""
            SELECT coll, key, value, seq FROM records WHERE user_id = \(user) AND seq > \(after) AND seq <= \(through)
            ORDER BY seq, coll, key
            """, logger: logger)
        return try await collect(rows)
    }

    func userWithPrunable(before: Int64) async throws -> String? {
        for sql: PostgresQuery in [
            "SELECT user_id FROM records WHERE value IS NULL AND written_at < \(before) LIMIT 1",
            "SELECT user_id FROM outcomes WHERE written_at < \(before) LIMIT 1",
        ] {
            for try await user in try await conn.query(sql, logger: logger).decode(String.self) { return user }
        }
        return nil
    }

    func prune(user: String, before: Int64, limit: Int) async throws -> Int {
        var removed = 0
        var highest: Int64 = 0
        // The space is locked: none of the user's rows move meanwhile, so their ctids hold.
        for sql: PostgresQuery in [
            """
            DELETE FROM records WHERE ctid = ANY(ARRAY(SELECT ctid FROM records
                WHERE user_id = \(user) AND value IS NULL AND written_at < \(before) LIMIT \(Int64(limit))))
            RETURNING seq
            """,
            """
            DELETE FROM outcomes WHERE ctid = ANY(ARRAY(SELECT ctid FROM outcomes
                WHERE user_id = \(user) AND written_at < \(before) LIMIT \(Int64(limit))))
            RETURNING seq
            """,
        ] {
            for try await seq in try await conn.query(sql, logger: logger).decode(Int64.self) {
                removed += 1
                highest = max(highest, seq)
            }
        }
        if removed > 0 {
            try await conn.query("UPDATE spaces SET pruned_seq = GREATEST(pruned_seq, \(highest)) WHERE user_id = \(user)",
                                 logger: logger)
        }
        return removed
    }

    /// Runs a write with its failure sorted (``PostgresStorage/classify(_:)``), so that a
    /// refusal of what it wrote reaches the push as ``StorageError/refused(_:)``.
    nonisolated(nonsending) private func classifying(_ body: () async throws -> Void) async throws {
        do { try await body() } catch { throw PostgresStorage.classify(error) }
    }

    private func collect(_ rows: PostgresRowSequence) async throws -> [StoredChange] {
        var out = [StoredChange]()
        for try await (coll, key, value, seq) in rows.decode((String, String, String?, Int64).self) {
            out.append(StoredChange(coll: coll, key: key, value: value, seq: seq))
        }
        return out
    }
}
