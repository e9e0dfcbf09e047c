import CSQLite
import Glibc

/// The pessimistic flow, done well: a WAL database with synchronous=NORMAL and prepared
/// statements. A tap writes one log row in a transaction, then the screen reads every log back
/// and recounts today's completed ones: the checkmark only shows after all of that. The heavy
/// reload reads all six columns of text rows (key, habit, day, a ~40-byte note ...); the lean one
/// keeps the five narrow columns the screen needs as integers in a table of its own.
final class SQLiteReload {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?, selectAll: OpaquePointer?, deleteOne: OpaquePointer?
    private var insertLean: OpaquePointer?, selectLean: OpaquePointer?, deleteLean: OpaquePointer?
    private var begin: OpaquePointer?, commit: OpaquePointer?
    let n: Int
    let today: String

    init(path: String, n: Int) {
        self.n = n
        today = Workload.day(Workload.todayIndex(n: n))
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        check(sqlite3_open(path, &db), "open")
        exec("PRAGMA journal_mode=WAL")
        exec("PRAGMA synchronous=NORMAL")
        exec("CREATE TABLE logs(id TEXT PRIMARY KEY, habit TEXT NOT NULL, day TEXT NOT NULL, done INTEGER NOT NULL, at INTEGER NOT NULL, note TEXT NOT NULL)")
        insert = prepare("INSERT INTO logs(id, habit, day, done, at, note) VALUES(?1, ?2, ?3, 1, ?4, ?5)")
        selectAll = prepare("SELECT id, habit, day, done, at, note FROM logs")
        // The lean table: the five narrow (integer) columns the screen needs, rowid as the id.
        exec("CREATE TABLE lean_logs(id INTEGER PRIMARY KEY, habit INTEGER NOT NULL, day INTEGER NOT NULL, done INTEGER NOT NULL, at INTEGER NOT NULL)")
        insertLean = prepare("INSERT INTO lean_logs(id, habit, day, done, at) VALUES(?1, ?2, ?3, 1, ?4)")
        selectLean = prepare("SELECT id, habit, day, done, at FROM lean_logs")
        deleteLean = prepare("DELETE FROM lean_logs WHERE id = ?1")
        deleteOne = prepare("DELETE FROM logs WHERE id = ?1")
        begin = prepare("BEGIN IMMEDIATE")
        commit = prepare("COMMIT")
        exec("BEGIN")
        for i in 0..<n {
            let e = Workload.existing(i, n: n)
            insertRow(e.key, e.habit, e.day, seq: i)
            insertLeanRow(id: i, e.habit, e.day, seq: i)
        }
        exec("COMMIT")
        exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    deinit {
        for s in [insert, selectAll, deleteOne, begin, commit, insertLean, selectLean, deleteLean] { sqlite3_finalize(s) }
        sqlite3_close(db)
    }

    /// One tap: write the log in a transaction, then reload everything and recount today.
    /// Returns the recomputed count (the value the checkmark screen shows).
    func tap(day: String, habit: String, seq: Int, lean: Bool = false) -> Int {
        step(begin)
        if lean {
            insertLeanRow(id: n + seq, habit, day, seq: seq)
        } else {
            insertRow(Workload.key(day: day, habit: habit), habit, day, seq: seq)
        }
        step(commit)
        return lean ? countTodayLean() : countToday()
    }

    /// Untimed clean-up after a tap (heavy or lean), so every repetition sees the same n.
    func undo(_ seq: Int, lean: Bool = false) {
        if lean {
            sqlite3_bind_int64(deleteLean, 1, Int64(n + seq))
            step(deleteLean)
            return
        }
        let t = Workload.pick(seq, n: n)
        Workload.key(day: t.day, habit: t.habit).withCString { k in
            sqlite3_bind_text(deleteOne, 1, k, -1, nil)
            step(deleteOne)
        }
    }

    /// SELECT every log, touching each column as a list screen would, and count today's done.
    func countToday() -> Int {
        var count = 0
        let todayBytes = Array(today.utf8)
        defer { sqlite3_reset(selectAll) }
        while true {
            let rc = sqlite3_step(selectAll)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { fatalError("select: \(String(cString: sqlite3_errmsg(db)))") }
            _ = sqlite3_column_text(selectAll, 0)
            _ = sqlite3_column_text(selectAll, 1)
            _ = sqlite3_column_int64(selectAll, 4)
            _ = sqlite3_column_text(selectAll, 5)
            let done = sqlite3_column_int(selectAll, 3)
            guard done != 0, let day = sqlite3_column_text(selectAll, 2) else { continue }
            let len = Int(sqlite3_column_bytes(selectAll, 2))
            if len == todayBytes.count, memcmp(day, todayBytes, len) == 0 { count += 1 }
        }
        return count
    }

    /// The lean read: every row of the narrow table, `done` and `day` first, the other columns
    /// touched only for the rows a list shows as done.
    func countTodayLean() -> Int {
        var count = 0
        let todayIndex = Int32(Workload.todayIndex(n: n))
        defer { sqlite3_reset(selectLean) }
        while true {
            let rc = sqlite3_step(selectLean)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { fatalError("select: \(String(cString: sqlite3_errmsg(db)))") }
            guard sqlite3_column_int(selectLean, 3) != 0 else { continue }
            _ = sqlite3_column_int64(selectLean, 0)
            _ = sqlite3_column_int(selectLean, 1)
            _ = sqlite3_column_int64(selectLean, 4)
            if sqlite3_column_int(selectLean, 2) == todayIndex { count += 1 }
        }
        return count
    }

    /// Day "d000123" and habit "h001" / "t000045" as the lean table's integers.
    private func insertLeanRow(id: Int, _ habit: String, _ day: String, seq: Int) {
        sqlite3_bind_int64(insertLean, 1, Int64(id))
        sqlite3_bind_int64(insertLean, 2, Int64(habit.dropFirst()) ?? -1)
        sqlite3_bind_int64(insertLean, 3, Int64(day.dropFirst()) ?? -1)
        sqlite3_bind_int64(insertLean, 4, Workload.at + Int64(seq))
        step(insertLean)
    }

    private func insertRow(_ key: String, _ habit: String, _ day: String, seq: Int) {
        key.withCString { k in habit.withCString { h in day.withCString { d in Workload.note.withCString { nt in
            sqlite3_bind_text(insert, 1, k, -1, nil)
            sqlite3_bind_text(insert, 2, h, -1, nil)
            sqlite3_bind_text(insert, 3, d, -1, nil)
            sqlite3_bind_int64(insert, 4, Workload.at + Int64(seq))
            sqlite3_bind_text(insert, 5, nt, -1, nil)
            step(insert)
        } } } }
    }

    private func step(_ s: OpaquePointer?) {
        let rc = sqlite3_step(s)
        sqlite3_reset(s)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { fatalError("step: \(String(cString: sqlite3_errmsg(db)))") }
    }

    private func prepare(_ sql: String) -> OpaquePointer? {
        var s: OpaquePointer?
        check(sqlite3_prepare_v2(db, sql, -1, &s, nil), sql)
        return s
    }

    private func exec(_ sql: String) { check(sqlite3_exec(db, sql, nil, nil, nil), sql) }

    private func check(_ rc: Int32, _ what: String) {
        guard rc == SQLITE_OK else { fatalError("\(what): \(String(cString: sqlite3_errmsg(db)))") }
    }
}
