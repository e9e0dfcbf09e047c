import Synchronization

/// The embedded store: one SQLite file in WAL mode. One writer connection takes every write
/// transaction in turn (`BEGIN IMMEDIATE`, so a second server process on the same file waits
/// for the lock instead of failing half way); pulls read from their own connections, which WAL
/// lets run beside the writer on a consistent snapshot.
///
/// SQLite calls block the calling thread; they are short (the file is local and a push writes
/// a few rows), so they run on the task's thread rather than being handed to another pool.
final class SQLiteStorage: Storage {
    static let schemaVersion: Int64 = 3

    private let path: String
    private let writer: SQLiteConnection
    private let writeGate = AsyncMutex()
    /// Idle reader connections; a pull takes one (or opens one) and puts it back.
    private let readers = Mutex<[SQLiteConnection]>([])

    init(path: String) throws(StorageError) {
        self.path = path
        writer = try SQLiteConnection(path: path)
        try writer.exec("PRAGMA journal_mode = WAL")
        // FULL: an answered push survives a power cut, not only a crash of this process.
        try writer.exec("PRAGMA synchronous = FULL")
        try migrate()
    }

    private func migrate() throws(StorageError) {
        try writer.exec("BEGIN IMMEDIATE")
        do throws(StorageError) {
            let version = try writer.integer("PRAGMA user_version") ?? 0
            if version > Self.schemaVersion {
                throw StorageError.failed("\(path) has schema version \(version); this server knows \(Self.schemaVersion) (upgrade the server)")
            }
            if version < 1 {
                try writer.exec("""
                    CREATE TABLE spaces (
                        user_id TEXT PRIMARY KEY,
                        seq INTEGER NOT NULL);
                    CREATE TABLE records (
                        user_id TEXT NOT NULL, coll TEXT NOT NULL, key TEXT NOT NULL,
                        value TEXT,
                        version INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (user_id, coll, key));
                    CREATE INDEX records_by_seq ON records (user_id, seq);
                    CREATE TABLE outcomes (
                        user_id TEXT NOT NULL, client_id TEXT NOT NULL, mutation_id INTEGER NOT NULL,
                        status TEXT NOT NULL,
                        retry INTEGER NOT NULL,
                        error TEXT,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (user_id, client_id, mutation_id));
                    PRAGMA user_version = 1;
                    """)
            }
            if version < 2 {
                // Version 2: the database's identity (cursors name it), each outcome's ops
                // digest, when rows were written (pruning), each record's size as a pulled
                // change (byte-bounded pages), each space's pruned seq. Rows written before
                // count as written now; their size is estimated when a pull needs it.
                let now = unixMilliseconds()
                try writer.exec("""
                    CREATE TABLE optimist_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
                    INSERT INTO optimist_meta (name, value) VALUES ('identity', '\(Cursor.newIdentity())');
                    ALTER TABLE spaces ADD COLUMN pruned_seq INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE records ADD COLUMN change_bytes INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE records ADD COLUMN written_at INTEGER NOT NULL DEFAULT \(now);
                    ALTER TABLE outcomes ADD COLUMN digest TEXT;
                    ALTER TABLE outcomes ADD COLUMN written_at INTEGER NOT NULL DEFAULT \(now);
                    CREATE INDEX records_tombstones_by_age ON records (written_at) WHERE value IS NULL;
                    CREATE INDEX outcomes_by_age ON outcomes (written_at);
                    PRAGMA user_version = 2;
                    """)
            }
            if version < 3 {
                // Version 3: shared spaces. Records and spaces are keyed by a space id
                // (``SpaceID``: `u:` + user, `s:` + space name) instead of the user id, and the
                // members of shared spaces have a table of their own, indexed by user. SQLite
                // cannot change a primary key in place: the two tables are copied.
                try writer.exec("""
                    CREATE TABLE spaces_v3 (
                        space TEXT PRIMARY KEY,
                        seq INTEGER NOT NULL,
                        pruned_seq INTEGER NOT NULL DEFAULT 0);
                    INSERT INTO spaces_v3 (space, seq, pruned_seq) SELECT 'u:' || user_id, seq, pruned_seq FROM spaces;
                    DROP TABLE spaces;
                    ALTER TABLE spaces_v3 RENAME TO spaces;
                    CREATE TABLE records_v3 (
                        space TEXT NOT NULL, coll TEXT NOT NULL, key TEXT NOT NULL,
                        value TEXT,
                        version INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        change_bytes INTEGER NOT NULL DEFAULT 0,
                        written_at INTEGER NOT NULL,
                        PRIMARY KEY (space, coll, key));
                    INSERT INTO records_v3 (space, coll, key, value, version, seq, change_bytes, written_at)
                        SELECT 'u:' || user_id, coll, key, value, version, seq, change_bytes, written_at FROM records;
                    DROP TABLE records;
                    ALTER TABLE records_v3 RENAME TO records;
                    CREATE INDEX records_by_seq ON records (space, seq);
                    CREATE INDEX records_tombstones_by_age ON records (written_at) WHERE value IS NULL;
                    CREATE TABLE members (
                        space TEXT NOT NULL, user_id TEXT NOT NULL,
                        role TEXT NOT NULL,
                        PRIMARY KEY (space, user_id));
                    CREATE INDEX members_by_user ON members (user_id, space);
                    PRAGMA user_version = 3;
                    """)
            }
            // Later versions migrate here, one step at a time.
            try writer.exec("COMMIT")
        } catch {
            try? writer.exec("ROLLBACK")
            throw error
        }
    }

    func write<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R {
        await writeGate.lock()
        defer { writeGate.unlock() }
        try writer.exec("BEGIN IMMEDIATE")
        do {
            let result = try await body(SQLiteTransaction(db: writer))
            try writer.exec("COMMIT")
            return result
        } catch {
            try? writer.exec("ROLLBACK")
            throw error
        }
    }

    func read<R: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> R) async throws -> R {
        let db = try checkoutReader()
        defer { checkin(db) }
        // The snapshot starts at the first SELECT and holds until COMMIT.
        try db.exec("BEGIN")
        do {
            let result = try await body(SQLiteTransaction(db: db))
            try db.exec("COMMIT")
            return result
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    /// One process per file is the rule for pokes: another process on the same file pokes its
    /// own streams only (their clients still pull at their interval).
    var announcesChanges: Bool { false }

    func ping() async throws {
        let db = try checkoutReader()
        defer { checkin(db) }
        _ = try db.integer("SELECT count(*) FROM spaces WHERE space = ''")
    }

    private func checkoutReader() throws(StorageError) -> SQLiteConnection {
        if let db = readers.withLock({ $0.popLast() }) { return db }
        return try SQLiteConnection(path: path)
    }

    private func checkin(_ db: SQLiteConnection) {
        // Keep a few for the next pulls; close the rest (the deinit closes them).
        readers.withLock { if $0.count < 8 { $0.append(db) } }
    }
}

/// The SQL of one transaction on a SQLite connection.
private struct SQLiteTransaction: StoreTransaction {
    let db: SQLiteConnection

    func lockSpace(_ space: SpaceID) throws -> Int64 {
        // BEGIN IMMEDIATE already holds the database's write lock; the row only needs to exist.
        try db.query("INSERT INTO spaces (space, seq) VALUES (?, 0) ON CONFLICT DO NOTHING", [.text(space.key)])
        return try db.integer("SELECT seq FROM spaces WHERE space = ?", [.text(space.key)]) ?? 0
    }

    func space(_ space: SpaceID) throws -> SpaceState {
        var state = SpaceState(seq: 0, prunedSeq: 0)
        try db.query("SELECT seq, pruned_seq FROM spaces WHERE space = ?", [.text(space.key)]) { r in
            state.seq = r.int(0)
            state.prunedSeq = r.int(1)
        }
        return state
    }

    func identity() throws -> String {
        var identity: String?
        try db.query("SELECT value FROM optimist_meta WHERE name = 'identity'") { r in identity = r.text(0) }
        guard let identity else { throw StorageError.failed("the database has no identity (optimist_meta)") }
        return identity
    }

    func setSpaceSeq(_ space: SpaceID, seq: Int64) throws {
        try db.query("UPDATE spaces SET seq = ? WHERE space = ?", [.int(seq), .text(space.key)])
    }

    func memberships(user: String) throws -> [Membership] {
        var found = [Membership]()
        try db.query("""
            SELECT m.space, m.role, coalesce(s.seq, 0), coalesce(s.pruned_seq, 0) FROM members m
            LEFT JOIN spaces s ON s.space = 's:' || m.space WHERE m.user_id = ? ORDER BY m.space
            """, [.text(user)]) { r in
            found.append(Membership(name: r.text(0) ?? "", role: r.text(1) ?? "", state: SpaceState(seq: r.int(2), prunedSeq: r.int(3))))
        }
        return found
    }

    func memberUsers(space: String) throws -> [String] {
        var users = [String]()
        try db.query("SELECT user_id FROM members WHERE space = ?", [.text(space)]) { r in users.append(r.text(0) ?? "") }
        return users
    }

    func announce(_ changes: SpaceChanges) {}

    func ownerCount(space: String) throws -> Int {
        Int(try db.integer("SELECT count(*) FROM members WHERE space = ? AND role = 'owner'", [.text(space)]) ?? 0)
    }

    func saveMember(space: String, user: String, role: String?) throws {
        if let role {
            try db.query("""
                INSERT INTO members (space, user_id, role) VALUES (?, ?, ?) ON CONFLICT (space, user_id) DO UPDATE SET role = excluded.role
                """, [.text(space), .text(user), .text(role)])
        } else {
            try db.query("DELETE FROM members WHERE space = ? AND user_id = ?", [.text(space), .text(user)])
        }
    }

    // One savepoint name: a push holds at most one open at a time.
    func savepoint() throws { try db.exec("SAVEPOINT mutation") }
    func releaseSavepoint() throws { try db.exec("RELEASE SAVEPOINT mutation") }
    func rollbackToSavepoint() throws {
        // ROLLBACK TO leaves the savepoint open: release it too.
        try db.exec("ROLLBACK TO SAVEPOINT mutation")
        try db.exec("RELEASE SAVEPOINT mutation")
    }

    func record(_ space: SpaceID, coll: String, key: String) throws -> StoredRecord? {
        var found: StoredRecord?
        try db.query("SELECT value, version, seq FROM records WHERE space = ? AND coll = ? AND key = ?",
                     [.text(space.key), .text(coll), .text(key)]) { r in
            found = StoredRecord(value: r.text(0), version: r.int(1), seq: r.int(2))
        }
        return found
    }

    func saveRecord(_ space: SpaceID, coll: String, key: String, _ record: StoredRecord) throws {
        try db.query("""
            INSERT INTO records (space, coll, key, value, version, seq, change_bytes, written_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (space, coll, key) DO UPDATE SET value = excluded.value, version = excluded.version, seq = excluded.seq,
                change_bytes = excluded.change_bytes, written_at = excluded.written_at
            """, [.text(space.key), .text(coll), .text(key), record.value.map(SQLValue.text) ?? .null, .int(record.version), .int(record.seq),
                  .int(record.changeBytes), .int(record.writtenAt)])
    }

    func outcomes(user: String, clientID: String, ids: [Int64]) throws -> [StoredOutcome] {
        // One indexed lookup per id: in-process calls cost next to nothing.
        var found = [StoredOutcome]()
        for id in ids {
            try db.query("""
                SELECT status, retry, error, seq, digest FROM outcomes WHERE user_id = ? AND client_id = ? AND mutation_id = ?
                """, [.text(user), .text(clientID), .int(id)]) { r throws(StorageError) in
                found.append(try outcome(id, status: r.text(0), retry: r.int(1), error: r.text(2), seq: r.int(3), digest: r.text(4)))
            }
        }
        return found
    }

    func saveOutcome(user: String, clientID: String, _ o: StoredOutcome) throws {
        try db.query("""
            INSERT INTO outcomes (user_id, client_id, mutation_id, status, retry, error, seq, digest, written_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id, client_id, mutation_id) DO UPDATE SET
                status = excluded.status, retry = excluded.retry, error = excluded.error, seq = excluded.seq,
                digest = excluded.digest, written_at = excluded.written_at
            """, [.text(user), .text(clientID), .int(o.mutationID), .text(o.status.rawValue), .int(o.retry),
                  o.error.map(SQLValue.text) ?? .null, .int(o.seq), o.digest.map(SQLValue.text) ?? .null, .int(o.writtenAt)])
    }

    func changeGroups(_ space: SpaceID, after: Int64, limit: Int) throws -> [ChangeGroup] {
        // Rows written before sizes were kept (change_bytes 0) count at most what their text
        // can take as JSON: every byte of a name escaped (6), the value as it is.
        var groups = [ChangeGroup]()
        try db.query("""
            SELECT seq, count(*), sum(CASE WHEN change_bytes > 0 THEN change_bytes ELSE
                40 + 6 * (length(CAST(coll AS BLOB)) + length(CAST(key AS BLOB))) + coalesce(length(CAST(value AS BLOB)), 0) END)
            FROM records WHERE space = ? AND seq > ? GROUP BY seq ORDER BY seq LIMIT ?
            """, [.text(space.key), .int(after), .int(Int64(limit))]) { r in
            groups.append(ChangeGroup(seq: r.int(0), count: Int(r.int(1)), bytes: r.int(2)))
        }
        return groups
    }

    func changes(_ space: SpaceID, after: Int64, through: Int64) throws -> [StoredChange] {
        var rows = [StoredChange]()
        try db.query("""
            SELECT coll, key, value, seq FROM records WHERE space = ? AND seq > ? AND seq <= ? ORDER BY seq, coll, key
            """, [.text(space.key), .int(after), .int(through)]) { r in
            rows.append(StoredChange(coll: r.text(0) ?? "", key: r.text(1) ?? "", value: r.text(2), seq: r.int(3)))
        }
        return rows
    }

    func spaceWithPrunableTombstones(before: Int64) throws -> SpaceID? {
        var space: SpaceID?
        try db.query("SELECT space FROM records WHERE value IS NULL AND written_at < ? LIMIT 1", [.int(before)]) { r in
            space = r.text(0).map(SpaceID.init(key:))
        }
        return space
    }

    func userWithPrunableOutcomes(before: Int64) throws -> String? {
        var user: String?
        try db.query("SELECT user_id FROM outcomes WHERE written_at < ? LIMIT 1", [.int(before)]) { r in user = r.text(0) }
        return user
    }

    func pruneTombstones(_ space: SpaceID, before: Int64, limit: Int) throws -> Int {
        try prune(space, """
            DELETE FROM records WHERE rowid IN (
                SELECT rowid FROM records WHERE space = ? AND value IS NULL AND written_at < ? LIMIT ?)
            RETURNING seq
            """, [.text(space.key), .int(before), .int(Int64(limit))])
    }

    func pruneOutcomes(user: String, before: Int64, limit: Int) throws -> Int {
        try prune(.user(user), """
            DELETE FROM outcomes WHERE rowid IN (SELECT rowid FROM outcomes WHERE user_id = ? AND written_at < ? LIMIT ?)
            RETURNING seq
            """, [.text(user), .int(before), .int(Int64(limit))])
    }

    /// Runs a DELETE ... RETURNING seq and raises the space's pruned seq to the highest.
    private func prune(_ space: SpaceID, _ sql: String, _ values: [SQLValue]) throws -> Int {
        var removed = 0
        var highest: Int64 = 0
        try db.query(sql, values) { r in
            removed += 1
            highest = max(highest, r.int(0))
        }
        if removed > 0 {
            try db.query("UPDATE spaces SET pruned_seq = max(pruned_seq, ?) WHERE space = ?", [.int(highest), .text(space.key)])
        }
        return removed
    }
}

/// An outcome row read back; a status this server never writes means a damaged database.
func outcome(_ id: Int64, status: String?, retry: Int64, error: String?, seq: Int64, digest: String?) throws(StorageError) -> StoredOutcome {
    guard let s = status.flatMap(StoredOutcome.Status.init(rawValue:)) else {
        throw .failed("outcome \(id) has an unknown status \(status ?? "NULL")")
    }
    return StoredOutcome(mutationID: id, status: s, retry: retry, error: error, seq: seq, digest: digest)
}
