import OptimistCore

/// The layout of a store file and how an older file is brought up to date.
///
/// A store file is recognized by `PRAGMA application_id` (``Schema/applicationID``); its
/// layout version is `PRAGMA user_version`. A SQLite file with another application id, or
/// without ours but with tables in it, is not ours (`CORRUPT`): the store never writes to it.
enum Schema {
    /// "OPTM": marks a SQLite file as an Optimist store.
    static let applicationID: Int32 = 0x4F50_544D

    /// `migrations[v]` takes a file from version `v` to `v + 1`; a new file runs them all.
    /// Version 2 is added by appending a step here (and teaching the loader its columns).
    static let migrations: [String] = [
        // 0 → 1: the first layout.
        """
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
        """,
    ]

    static var currentVersion: Int64 { Int64(migrations.count) }

    /// Checks that the file is an Optimist store (or a new, empty file) and migrates it to the
    /// current version. Returns true when the file was new. Runs in one transaction with the
    /// caller's connection, before anything else touches the file.
    static func prepare(_ c: Connection) throws(OptimistError) -> Bool {
        try c.exec("BEGIN IMMEDIATE")
        do throws(OptimistError) {
            let appID = try c.scalarInt("PRAGMA application_id")
            let version = try c.scalarInt("PRAGMA user_version")
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
            for v in Int(fresh ? 0 : version)..<migrations.count { try c.exec(migrations[v]) }
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
