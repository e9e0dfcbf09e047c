import Logging
import OptimistModel
import PostgresNIO
import Synchronization

/// The store for deployments that outgrow one machine: any number of server processes share
/// one PostgreSQL database. Correctness across processes rests on one row lock per space: a
/// push first locks its user's private `spaces` row (`SELECT ... FOR UPDATE`), then the shared
/// spaces it writes, so one user's writes and one space's writes are serialized (exactly once,
/// per-client order, gap-free seqs) while pushes to different spaces run in parallel. Pushes run at READ COMMITTED: every statement after the lock sees
/// what the previous holder committed. Pulls run at REPEATABLE READ: one snapshot.
final class PostgresStorage: Storage {
    static let schemaVersion: Int32 = 3

    /// The connection pool; it runs as a service of the application (see Main.swift).
    let client: PostgresClient
    private let logger: Logger

    /// How long one transaction may hold its connection before the request answers 503 and
    /// the connection is closed (see `leased`).
    private let transactionTimeout: Duration

    /// `statementTimeoutMs`: PostgreSQL's `statement_timeout`, sent as a start-up parameter of
    /// every pooled connection, so that no statement (a lock wait included) holds a connection
    /// of the pool longer than that; the request then answers 503 and its transaction rolls
    /// back. `transactionTimeoutMs`: the bound on a whole transaction, kept by this process.
    init(configuration: PostgresClient.Configuration, statementTimeoutMs: Int = 30_000,
         transactionTimeoutMs: Int = 60_000, logger: Logger) {
        transactionTimeout = .milliseconds(transactionTimeoutMs)
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
            try await leased(waitingAtMost: .seconds(30), deadline: false) { [self] conn in
                try await self.transaction(conn, begin: "BEGIN") {
                    try await conn.query("SELECT pg_advisory_xact_lock(7262011)", logger: logger)
                    // A migration copies whole tables (version 3): no statement timeout of the
                    // pool's may cut it short and leave the server unable to start.
                    try await conn.query("SET LOCAL statement_timeout = 0", logger: logger)
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
                    if version < 3 {
                        try await self.migrateToVersion3(conn)
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

    /// Version 3: shared spaces. Records and spaces are keyed by a space id (``SpaceID``: `u:` +
    /// user, `s:` + space name) instead of the user id, and the members of shared spaces have a
    /// table of their own, indexed by user. The ids are rewritten in new tables (an UPDATE of
    /// the key in place could collide with a row not yet rewritten: a user `u:x` beside `x`).
    private func migrateToVersion3(_ conn: PostgresConnection) async throws {
        for ddl in [
            """
            CREATE TABLE spaces_v3 (
                space TEXT COLLATE "C" PRIMARY KEY,
                seq BIGINT NOT NULL,
                pruned_seq BIGINT NOT NULL DEFAULT 0)
            """,
            "INSERT INTO spaces_v3 (space, seq, pruned_seq) SELECT 'u:' || user_id, seq, pruned_seq FROM spaces",
            "DROP TABLE spaces",
            "ALTER TABLE spaces_v3 RENAME TO spaces",
            "ALTER INDEX spaces_v3_pkey RENAME TO spaces_pkey",
            """
            CREATE TABLE records_v3 (
                space TEXT COLLATE "C" NOT NULL, coll TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
                value TEXT,
                version BIGINT NOT NULL,
                seq BIGINT NOT NULL,
                change_bytes BIGINT NOT NULL DEFAULT 0,
                written_at BIGINT NOT NULL,
                PRIMARY KEY (space, coll, key))
            """,
            """
            INSERT INTO records_v3 (space, coll, key, value, version, seq, change_bytes, written_at)
            SELECT 'u:' || user_id, coll, key, value, version, seq, change_bytes, written_at FROM records
            """,
            "DROP TABLE records",
            "ALTER TABLE records_v3 RENAME TO records",
            "ALTER INDEX records_v3_pkey RENAME TO records_pkey",
            "CREATE INDEX records_by_seq ON records (space, seq)",
            "CREATE INDEX records_tombstones_by_age ON records (written_at) WHERE value IS NULL",
            """
            CREATE TABLE members (
                space TEXT COLLATE "C" NOT NULL, user_id TEXT COLLATE "C" NOT NULL,
                role TEXT NOT NULL,
                PRIMARY KEY (space, user_id))
            """,
            "CREATE INDEX members_by_user ON members (user_id, space)",
            "INSERT INTO optimist_schema (version) VALUES (3)",
        ] {
            // Fixed text: nothing of a request's goes in.
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

    var announcesChanges: Bool { true }

    /// The channel of NOTIFY and LISTEN (``StoreTransaction/announce(_:)``, ``ChangeListener``).
    static let changesChannel = "optimist_changes"

    func ping() async throws {
        do {
            try await leased { conn in _ = try await conn.query("SELECT 1", logger: self.logger) }
        } catch {
            throw Self.classify(error)
        }
    }

    /// Runs `body` with a pooled connection. Two bounds make the request answer 503 rather
    /// than wait: no connection within `limit` (the pool may be retrying a database that is
    /// down, up to a minute before its circuit breaker trips), and `body` not done within
    /// `transactionTimeout` once it has its connection. The second covers what
    /// `statement_timeout` cannot: a connection whose backend was terminated under a query has
    /// been seen to leave that query unanswered for good. The connection is then closed, which
    /// rolls back whatever `body` had not committed, and the pool replaces it; the caller does
    /// not wait for `body` to notice.
    private func leased<R: Sendable>(waitingAtMost limit: Duration = .seconds(5), deadline: Bool = true,
                                     _ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let race = LeaseRace<R>()
        let client = self.client, logger = self.logger
        let transactionTimeout: Duration? = deadline ? self.transactionTimeout : nil
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (answer: CheckedContinuation<R, any Error>) in
                race.start(answer)
                let work = Task {
                    do {
                        let result = try await client.withConnection { conn in
                            race.leased(conn)
                            if let transactionTimeout {
                                race.addTimer(Task {
                                    try await Task.sleep(for: transactionTimeout)
                                    guard let stuck = race.finishIfRunning(.failure(StorageError.transient(
                                        "PostgreSQL did not answer within \(transactionTimeout); the connection was closed"))) else { return }
                                    logger.warning("a transaction ran past \(transactionTimeout): closing its connection")
                                    race.cancel()
                                    try? await stuck.close()
                                })
                            }
                            return try await body(conn)
                        }
                        race.finish(.success(result))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                race.onCancel { work.cancel() }
                race.addTimer(Task {
                    try await Task.sleep(for: limit)
                    if race.finishIfNotLeased(.failure(StorageError.transient("no database connection within \(limit)"))) {
                        race.cancel()
                    }
                })
            }
        } onCancel: {
            race.cancel()
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

/// Who answers a `leased` call first: the work, the wait for a connection, the transaction's
/// deadline, or the caller's cancellation. The continuation is resumed exactly once; once it
/// is, the timers are cancelled.
private final class LeaseRace<R: Sendable>: Sendable {
    private struct State {
        var answer: CheckedContinuation<R, any Error>?
        var conn: PostgresConnection?
        var leased = false
        var cancelled = false
        var cancelWork: (@Sendable () -> Void)?
        var timers: [Task<Void, any Error>] = []
    }

    private let state = Mutex(State())

    func start(_ answer: CheckedContinuation<R, any Error>) {
        state.withLock { $0.answer = answer }
    }

    func leased(_ conn: PostgresConnection) {
        state.withLock {
            $0.leased = true
            $0.conn = conn
        }
    }

    /// Keeps `timer` to cancel it when the answer is given (at once if it was).
    func addTimer(_ timer: Task<Void, any Error>) {
        let answered = state.withLock { s -> Bool in
            if s.answer == nil { return true }
            s.timers.append(timer)
            return false
        }
        if answered { timer.cancel() }
    }

    /// Registers how to stop the work; runs it at once if the caller was already cancelled.
    func onCancel(_ cancelWork: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            s.cancelWork = cancelWork
            return s.cancelled
        }
        if now { cancelWork() }
    }

    /// Stops the work (it then answers with its cancellation error, if it still can).
    func cancel() {
        let cancelWork = state.withLock { s -> (@Sendable () -> Void)? in
            s.cancelled = true
            return s.cancelWork
        }
        cancelWork?()
    }

    func finish(_ result: Result<R, any Error>) {
        take(if: { _ in true })?.answer.resume(with: result)
    }

    /// Answers with `result` if no connection was leased yet; true if it did.
    func finishIfNotLeased(_ result: Result<R, any Error>) -> Bool {
        guard let taken = take(if: { !$0.leased }) else { return false }
        taken.answer.resume(with: result)
        return true
    }

    /// Answers with `result` if the work still runs; returns its connection, to be closed.
    func finishIfRunning(_ result: Result<R, any Error>) -> PostgresConnection? {
        guard let taken = take(if: { _ in true }) else { return nil }
        taken.answer.resume(with: result)
        return taken.conn
    }

    /// The continuation, if not yet taken and `condition` holds; cancels the timers.
    private func take(if condition: (State) -> Bool) -> (answer: CheckedContinuation<R, any Error>, conn: PostgresConnection?)? {
        let taken = state.withLock { s -> (CheckedContinuation<R, any Error>, PostgresConnection?, [Task<Void, any Error>])? in
            guard let answer = s.answer, condition(s) else { return nil }
            defer { s.answer = nil; s.conn = nil; s.timers = [] }
            return (answer, s.conn, s.timers)
        }
        guard let (answer, conn, timers) = taken else { return nil }
        for timer in timers { timer.cancel() }
        return (answer, conn)
    }
}

/// The SQL of one transaction on a PostgreSQL connection.
private struct PostgresTransaction: StoreTransaction {
    let conn: PostgresConnection
    let logger: Logger

    func lockSpace(_ space: SpaceID) async throws -> Int64 {
        try await conn.query("INSERT INTO spaces (space, seq) VALUES (\(space.key), 0) ON CONFLICT DO NOTHING", logger: logger)
        // The lock that serializes this space's writes across every server process.
        var seq: Int64?
        for try await s in try await conn.query("SELECT seq FROM spaces WHERE space = \(space.key) FOR UPDATE", logger: logger).decode(Int64.self) {
            seq = s
        }
        guard let seq else { throw StorageError.failed("the row of space \(space) vanished") }
        return seq
    }

    func space(_ space: SpaceID) async throws -> SpaceState {
        var state = SpaceState(seq: 0, prunedSeq: 0)
        let rows = try await conn.query("SELECT seq, pruned_seq FROM spaces WHERE space = \(space.key)", logger: logger)
        for try await (seq, pruned) in rows.decode((Int64, Int64).self) { state = SpaceState(seq: seq, prunedSeq: pruned) }
        return state
    }

    func identity() async throws -> String {
        for try await identity in try await conn.query("SELECT value FROM optimist_meta WHERE name = 'identity'", logger: logger)
            .decode(String.self) { return identity }
        throw StorageError.failed("the database has no identity (optimist_meta)")
    }

    func setSpaceSeq(_ space: SpaceID, seq: Int64) async throws {
        try await conn.query("UPDATE spaces SET seq = \(seq) WHERE space = \(space.key)", logger: logger)
    }

    func memberships(user: String) async throws -> [Membership] {
        let rows = try await conn.query("""
            SELECT m.space, m.role, coalesce(s.seq, 0), coalesce(s.pruned_seq, 0) FROM members m
            LEFT JOIN spaces s ON s.space = 's:' || m.space WHERE m.user_id = \(user) ORDER BY m.space
            """, logger: logger)
        var found = [Membership]()
        for try await (name, role, seq, pruned) in rows.decode((String, String, Int64, Int64).self) {
            found.append(Membership(name: name, role: role, state: SpaceState(seq: seq, prunedSeq: pruned)))
        }
        return found
    }

    func memberUsers(space: String) async throws -> [String] {
        var users = [String]()
        for try await user in try await conn.query("SELECT user_id FROM members WHERE space = \(space)", logger: logger)
            .decode(String.self) { users.append(user) }
        return users
    }

    func announce(_ changes: SpaceChanges) async throws {
        // Delivered at COMMIT, to every process listening (this one too), and not at all on a
        // rollback.
        for payload in changes.payloads() {
            try await conn.query("SELECT pg_notify(\(PostgresStorage.changesChannel), \(payload))", logger: logger)
        }
    }

    func ownerCount(space: String) async throws -> Int {
        for try await n in try await conn.query("SELECT count(*) FROM members WHERE space = \(space) AND role = 'owner'", logger: logger)
            .decode(Int64.self) { return Int(n) }
        return 0
    }

    func saveMember(space: String, user: String, role: String?) async throws {
        try await classifying {
            if let role {
                _ = try await conn.query("""
                    INSERT INTO members (space, user_id, role) VALUES (\(space), \(user), \(role))
                    ON CONFLICT (space, user_id) DO UPDATE SET role = excluded.role
                    """, logger: logger)
            } else {
                _ = try await conn.query("DELETE FROM members WHERE space = \(space) AND user_id = \(user)", logger: logger)
            }
        }
    }

    // One savepoint name: a push holds at most one open at a time.
    func savepoint() async throws { try await conn.query("SAVEPOINT mutation", logger: logger) }
    func releaseSavepoint() async throws { try await conn.query("RELEASE SAVEPOINT mutation", logger: logger) }
    func rollbackToSavepoint() async throws {
        // ROLLBACK TO leaves the savepoint open: release it too.
        try await conn.query("ROLLBACK TO SAVEPOINT mutation", logger: logger)
        try await conn.query("RELEASE SAVEPOINT mutation", logger: logger)
    }

    func record(_ space: SpaceID, coll: String, key: String) async throws -> StoredRecord? {
        let rows = try await conn.query("""
            SELECT value, version, seq FROM records WHERE space = \(space.key) AND coll = \(coll) AND key = \(key)
            """, logger: logger)
        var found: StoredRecord?
        for try await (value, version, seq) in rows.decode((String?, Int64, Int64).self) {
            found = StoredRecord(value: value, version: version, seq: seq)
        }
        return found
    }

    func saveRecord(_ space: SpaceID, coll: String, key: String, _ record: StoredRecord) async throws {
        try await classifying {
            _ = try await conn.query("""
                INSERT INTO records (space, coll, key, value, version, seq, change_bytes, written_at)
                VALUES (\(space.key), \(coll), \(key), \(record.value), \(record.version), \(record.seq), \(record.changeBytes),
                        \(record.writtenAt))
                ON CONFLICT (space, coll, key) DO UPDATE SET value = excluded.value, version = excluded.version, seq = excluded.seq,
                    change_bytes = excluded.change_bytes, written_at = excluded.written_at
                """, logger: logger)
        }
    }

    // The batch forms: one statement for a whole push's records or outcomes, the rows passed as
    // arrays (a round trip per row is what a push on PostgreSQL would otherwise spend its
    // time on). Nullable columns go as a value array and a null mask.

    func records(_ refs: [RecordRef]) async throws -> [RecordRef: StoredRecord] {
        guard !refs.isEmpty else { return [:] }
        let rows = try await conn.query("""
            SELECT r.space, r.coll, r.key, r.value, r.version, r.seq FROM records r
            JOIN unnest(\(refs.map(\.space.key)), \(refs.map(\.coll.string)), \(refs.map(\.key.string))) AS t(s, c, k)
              ON r.space = t.s COLLATE "C" AND r.coll = t.c COLLATE "C" AND r.key = t.k COLLATE "C"
            """, logger: logger)
        var found = [RecordRef: StoredRecord]()
        for try await (space, coll, key, value, version, seq) in rows.decode((String, String, String, String?, Int64, Int64).self) {
            found[RecordRef(space: SpaceID(key: space), coll: Key(coll), key: Key(key))] = StoredRecord(value: value, version: version, seq: seq)
        }
        return found
    }

    func saveRecords(_ rows: [(RecordRef, StoredRecord)]) async throws {
        guard !rows.isEmpty else { return }
        let spaces = rows.map(\.0.space.key), colls = rows.map(\.0.coll.string), keys = rows.map(\.0.key.string)
        let values = rows.map { $0.1.value ?? "" }, deleted = rows.map { $0.1.value == nil }
        let versions = rows.map(\.1.version), seqs = rows.map(\.1.seq), bytes = rows.map(\.1.changeBytes)
        let written = rows.map(\.1.writtenAt)
        try await classifying {
            _ = try await conn.query("""
                INSERT INTO records (space, coll, key, value, version, seq, change_bytes, written_at)
                SELECT s, c, k, CASE WHEN d THEN NULL ELSE v END, ver, sq, b, w
                FROM unnest(\(spaces), \(colls), \(keys), \(values), \(deleted), \(versions), \(seqs), \(bytes), \(written))
                    AS t(s, c, k, v, d, ver, sq, b, w)
                ON CONFLICT (space, coll, key) DO UPDATE SET value = excluded.value, version = excluded.version, seq = excluded.seq,
                    change_bytes = excluded.change_bytes, written_at = excluded.written_at
                """, logger: logger)
        }
    }

    func saveOutcomes(user: String, clientID: String, _ outcomes: [StoredOutcome]) async throws {
        guard !outcomes.isEmpty else { return }
        let ids = outcomes.map(\.mutationID), statuses = outcomes.map(\.status.rawValue), retries = outcomes.map(\.retry)
        let errors = outcomes.map { $0.error ?? "" }, noError = outcomes.map { $0.error == nil }
        let seqs = outcomes.map(\.seq), digests = outcomes.map { $0.digest ?? "" }, noDigest = outcomes.map { $0.digest == nil }
        let written = outcomes.map(\.writtenAt)
        try await classifying {
            _ = try await conn.query("""
                INSERT INTO outcomes (user_id, client_id, mutation_id, status, retry, error, seq, digest, written_at)
                SELECT \(user), \(clientID), i, st, r, CASE WHEN ne THEN NULL ELSE e END, sq, CASE WHEN nd THEN NULL ELSE dg END, w
                FROM unnest(\(ids), \(statuses), \(retries), \(errors), \(noError), \(seqs), \(digests), \(noDigest), \(written))
                    AS t(i, st, r, e, ne, sq, dg, nd, w)
                ON CONFLICT (user_id, client_id, mutation_id) DO UPDATE SET
                    status = excluded.status, retry = excluded.retry, error = excluded.error, seq = excluded.seq,
                    digest = excluded.digest, written_at = excluded.written_at
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

    func changeGroups(_ space: SpaceID, after: Int64, limit: Int) async throws -> [ChangeGroup] {
        // Rows written before sizes were kept (change_bytes 0) count at most what their text
        // can take as JSON: every byte of a name escaped (6), the value as it is.
        let rows = try await conn.query("""
            SELECT seq, count(*), sum(CASE WHEN change_bytes > 0 THEN change_bytes ELSE
                40 + 6 * (octet_length(coll) + octet_length(key)) + coalesce(octet_length(value), 0) END)::BIGINT
            FROM records WHERE space = \(space.key) AND seq > \(after) GROUP BY seq ORDER BY seq LIMIT \(Int64(limit))
            """, logger: logger)
        var groups = [ChangeGroup]()
        for try await (seq, count, bytes) in rows.decode((Int64, Int64, Int64).self) {
            groups.append(ChangeGroup(seq: seq, count: Int(count), bytes: bytes))
        }
        return groups
    }

    func changes(_ space: SpaceID, after: Int64, through: Int64) async throws -> [StoredChange] {
        let rows = try await conn.query("""
            SELECT coll, key, value, seq FROM records WHERE space = \(space.key) AND seq > \(after) AND seq <= \(through)
            ORDER BY seq, coll, key
            """, logger: logger)
        return try await collect(rows)
    }

    func spaceWithPrunableTombstones(before: Int64) async throws -> SpaceID? {
        for try await space in try await conn.query(
            "SELECT space FROM records WHERE value IS NULL AND written_at < \(before) LIMIT 1", logger: logger).decode(String.self) {
            return SpaceID(key: space)
        }
        return nil
    }

    func userWithPrunableOutcomes(before: Int64) async throws -> String? {
        for try await user in try await conn.query(
            "SELECT user_id FROM outcomes WHERE written_at < \(before) LIMIT 1", logger: logger).decode(String.self) { return user }
        return nil
    }

    // The space is locked: none of its rows move meanwhile, so their ctids hold.
    func pruneTombstones(_ space: SpaceID, before: Int64, limit: Int) async throws -> Int {
        try await prune(space, """
            DELETE FROM records WHERE ctid = ANY(ARRAY(SELECT ctid FROM records
                WHERE space = \(space.key) AND value IS NULL AND written_at < \(before) LIMIT \(Int64(limit))))
            RETURNING seq
            """)
    }

    func pruneOutcomes(user: String, before: Int64, limit: Int) async throws -> Int {
        try await prune(.user(user), """
            DELETE FROM outcomes WHERE ctid = ANY(ARRAY(SELECT ctid FROM outcomes
                WHERE user_id = \(user) AND written_at < \(before) LIMIT \(Int64(limit))))
            RETURNING seq
            """)
    }

    /// Runs a DELETE ... RETURNING seq and raises the space's pruned seq to the highest.
    private func prune(_ space: SpaceID, _ sql: PostgresQuery) async throws -> Int {
        var removed = 0
        var highest: Int64 = 0
        for try await seq in try await conn.query(sql, logger: logger).decode(Int64.self) {
            removed += 1
            highest = max(highest, seq)
        }
        if removed > 0 {
            try await conn.query("UPDATE spaces SET pruned_seq = GREATEST(pruned_seq, \(highest)) WHERE space = \(space.key)",
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
