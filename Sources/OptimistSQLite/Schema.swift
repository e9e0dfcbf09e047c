import OptimistCore
import OptimistModel

/// The layout of a store file and how an older file is brought up to date.
///
/// A store file is recognized by `PRAGMA application_id` (``Schema/applicationID``); its
/// layout version is `PRAGMA user_version`. A SQLite file with another application id, or
/// without ours but with tables in it, is not ours (`CORRUPT`): the store never writes to it.
///
/// The command-line tool reads files of every layout without migrating them, through what
/// the `package` members here and in StoredRows.swift say about them.
package enum Schema {
    /// "OPTM": marks a SQLite file as an Optimist store.
    package static let applicationID: Int32 = 0x4F50_544D

    /// One step of ``migrations``: SQL text, or Swift code for what SQL says badly.
    enum Migration: Sendable {
        case sql(String)
        case code(@Sendable (Connection) throws(OptimistError) -> Void)

        func run(_ c: Connection) throws(OptimistError) {
            switch self {
            case .sql(let text): try c.exec(text)
            case .code(let body): try body(c)
            }
        }
    }

    /// `migrations[v]` takes a file from version `v` to `v + 1`; a new file runs them all.
    /// A new version is added by appending a step here (and teaching the loader its columns).
    /// Steps are never edited once released: existing files ran them as they were.
    static let migrations: [Migration] = [
        // 0 → 1: the first layout.
        .sql("""
        CREATE TABLE meta(
            one INTEGER PRIMARY KEY CHECK (one = 1),
            client_id TEXT NOT NULL,
            next_mutation_id INTEGER NOT NULL,
            closed_cleanly INTEGER NOT NULL DEFAULT 1);
        CREATE TABLE records(
            coll TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (coll, key)) WITHOUT ROWID;
        CREATE TABLE mutations(
            id INTEGER PRIMARY KEY,
            ops TEXT NOT NULL,
            status INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            next_attempt_ms INTEGER NOT NULL,
            dedupe_key TEXT,
            policy INTEGER NOT NULL,
            last_error TEXT);
        CREATE TABLE ended(
            id INTEGER PRIMARY KEY,
            status INTEGER NOT NULL);
        CREATE TABLE loaded(
            seq INTEGER PRIMARY KEY,
            coll TEXT NOT NULL,
            from_key TEXT NOT NULL,
            to_key TEXT NOT NULL,
            at_ms INTEGER NOT NULL);
        """),
        // 1 → 2: ended statuses as 2-bit codes in chunks (see ``EndedChunks``), not a row each.
        .code(endedToChunks),
        // 2 → 3: the sync. A mutation's wire retry count and send-queue position (NULL: its
        // id), and the pull cursor.
        .sql("""
        ALTER TABLE mutations ADD COLUMN retry INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE mutations ADD COLUMN queue_position INTEGER;
        ALTER TABLE meta ADD COLUMN sync_cursor TEXT;
        """),
        // 3 → 4: storage that scales. Records stay in the file and are read on demand, so
        // views are kept here with their value over the confirmed records (a reopen reads
        // them instead of recomputing them). `kind` is "count" or "sum:<field>".
        .sql("""
        CREATE TABLE views(
            name TEXT PRIMARY KEY,
            coll TEXT NOT NULL,
            prefix TEXT NOT NULL,
            kind TEXT NOT NULL,
            confirmed_value REAL NOT NULL) WITHOUT ROWID;
        """),
        // 4 → 5: a mutation's ops are written packed (``PackedOps``, a BLOB), no longer as
        // JSON text. Rows already in the file stay text and still load, so nothing is
        // rewritten; the step is the version, which tells an older library that it cannot
        // read the new rows (it reports the file as newer, not as damaged).
        .code { _ in },
        // 5 → 6: a pull round's pages staged until the round ends (see ``PullStageRows``):
        // the round's progress (one row while a round is staged) and its pages' changes,
        // packed (``PackedOps``), a row per page in arrival order.
        .sql("""
        CREATE TABLE pull_round(
            one INTEGER PRIMARY KEY CHECK (one = 1),
            cursor TEXT NOT NULL,
            reset INTEGER NOT NULL,
            staged INTEGER NOT NULL);
        CREATE TABLE pull_stage(
            page INTEGER PRIMARY KEY,
            ops BLOB NOT NULL);
        """),
        // 6 → 7: ordered secondary indexes (see ``FileIndexes``): one row per index, and its
        // entries by sort key. Their triggers on `records` are made when an index is defined.
        .sql("""
        CREATE TABLE indexes(
            id INTEGER PRIMARY KEY,
            coll TEXT NOT NULL,
            field TEXT NOT NULL,
            UNIQUE (coll, field));
        CREATE TABLE index_entries(
            idx INTEGER NOT NULL,
            sort BLOB NOT NULL,
            key TEXT NOT NULL,
            PRIMARY KEY (idx, sort, key)) WITHOUT ROWID;
        """),
    ]

    /// The newest layout: the one this library writes.
    package static var currentVersion: Int64 { Int64(migrations.count) }

    /// The tables, named as ``migrations`` create them.
    package enum Table: String {
        case meta, records, mutations, loaded
        /// Layout 1's ended statuses, a row each (see ``endedToChunks(_:)``).
        case ended
        /// The ended statuses from layout 2 on (see ``EndedChunks``).
        case endedChunks = "ended_chunks"
        /// Stored views, from layout 4 on.
        case views
        /// A staged pull round's progress and pages, from layout 6 on.
        case pullRound = "pull_round"
        case pullStage = "pull_stage"
        /// Ordered secondary indexes and their entries, from layout 7 on.
        case indexes
        case indexEntries = "index_entries"
    }

    /// The columns ``migrations`` added to a table after creating it, each with the value
    /// the rows already there took: a reader of an older file that it does not migrate reads
    /// that value in the column's place.
    static let addedColumns: [Table: [String: String]] = [
        .mutations: ["retry": "0", "queue_position": "NULL"],  // 2 → 3
        .meta: ["sync_cursor": "NULL"],                        // 2 → 3
    ]

    /// `SELECT columns FROM table` for a file whose table has the columns `present` (nil: the
    /// current layout's, all of them), each added column it lacks read as its value from
    /// before. Any other column it lacks is named all the same, for SQLite to report.
    static func select(_ columns: [String], from table: Table, present: Set<String>?) -> String {
        let list = columns.map { c in
            guard let present, !present.contains(c), let before = addedColumns[table]?[c] else { return c }
            return before
        }
        return "SELECT \(list.joined(separator: ", ")) FROM \(table.rawValue)"
    }

    /// The file's application id (``applicationID`` in a store) and its layout version.
    package static func marks(_ c: Connection) throws(OptimistError) -> (applicationID: Int64, version: Int64) {
        let applicationID = try c.scalarInt("PRAGMA application_id")
        return (applicationID, try c.scalarInt("PRAGMA user_version"))
    }

    /// Checks that the file is an Optimist store (or a new, empty file) and migrates it to the
    /// current version. Returns true when the file was new. Runs in one transaction with the
    /// caller's connection, before anything else touches the file.
    static func prepare(_ c: Connection) throws(OptimistError) -> Bool {
        try c.exec("BEGIN IMMEDIATE")
        do throws(OptimistError) {
            let (appID, version) = try marks(c)
            let fresh: Bool
            if appID == Int64(applicationID) {
                guard version <= currentVersion else {
                    throw OptimistError.corrupt("store file version \(version) is newer than this library (\(currentVersion))")
                }
                guard version >= 1 else { throw OptimistError.corrupt("store file has no layout version") }
                fresh = false
            } else if appID == 0, version == 0, try c.scalarInt("SELECT count(*) FROM sqlite_master") == 0 {
                try c.exec("PRAGMA application_id = \(applicationID)")
                fresh = true
            } else {
                throw OptimistError.corrupt("not an Optimist store (application id \(appID), version \(version))")
            }
            for v in Int(fresh ? 0 : version)..<migrations.count { try migrations[v].run(c) }
            if fresh || version < currentVersion { try c.exec("PRAGMA user_version = \(currentVersion)") }
            if fresh {
                let s = try c.prepare("INSERT INTO meta(one, client_id, next_mutation_id) VALUES (1, ?, 1)")
                s.bind(1, makeClientID())
                try s.run()
            }
            try c.exec("COMMIT")
            return fresh
        } catch {
            try? c.exec("ROLLBACK")
            throw error
        }
    }
}

extension Schema {
    /// Moves every `ended(id, status)` row into `ended_chunks` and drops `ended`. A row that
    /// is not an ended status (a live or unknown status) is `CORRUPT`, as the version 1 loader
    /// had it, and the file is left as it was (the caller's transaction rolls back).
    @Sendable static func endedToChunks(_ c: Connection) throws(OptimistError) {
        try c.exec("CREATE TABLE ended_chunks(chunk INTEGER PRIMARY KEY, bits BLOB NOT NULL)")
        // Ids are u64 stored as their bit pattern; none reaches 2^63 in practice, and the
        // order only keeps runs of one chunk together.
        let rows = try c.prepare("SELECT id, status FROM ended ORDER BY id")
        let put = try c.prepare("INSERT INTO ended_chunks(chunk, bits) VALUES (?, ?)")
        var chunk: Int64 = -1
        var bits = [UInt8]()
        func flushChunk() throws(OptimistError) {
            guard chunk >= 0 else { return }
            put.bind(1, chunk)
            put.bindBlob(2, bits)
            try put.run()
        }
        while try rows.step() {
            let id = MutationID(bitPattern: rows.int64(0))
            guard let status = MutationStatus(rawValue: Int32(truncatingIfNeeded: rows.int64(1))), status.isEnded else {
                throw .corrupt("ended mutation \(id) has an unknown status")
            }
            if EndedChunks.chunk(of: id) != chunk {
                try flushChunk()
                chunk = EndedChunks.chunk(of: id)
                bits = [UInt8](repeating: 0, count: EndedChunks.bytesPerChunk)
            }
            EndedChunks.set(&bits, id, status)
        }
        try flushChunk()
        rows.reset()
        try c.exec("DROP TABLE ended")
    }
}
