import CServerSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value bound to a statement parameter.
enum SQLValue {
    case text(String)
    case int(Int64)
    case null
}

/// One SQLite connection with a cache of prepared statements.
///
/// `@unchecked Sendable`: SQLiteStorage hands a connection to one task at a time (the writer
/// behind its gate, readers through a checkout list), so it is never used concurrently; the
/// library is opened without its own mutexes for that reason.
final class SQLiteConnection: @unchecked Sendable {
    private let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(path: String) throws(StorageError) {
        try Self.createOwnerOnly(path)
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw .failed("cannot open \(path): \(message)")
        }
        db = handle
        // Another server process on the same file may hold the write lock for a moment.
        sqlite3_busy_timeout(db, 5000)
    }

    /// Creates the database file, when it does not exist yet, readable and writable by its
    /// owner only (0600), whatever the umask: it holds every user's records. SQLite creates the
    /// -wal and -shm files with the database file's mode, so they follow. An existing file keeps
    /// the mode its owner gave it.
    private static func createOwnerOnly(_ path: String) throws(StorageError) {
        if path == ":memory:" || path.hasPrefix("file:") { return }
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST { return }
            // Not ours to explain (a missing folder, a read-only disk): sqlite3_open_v2 says it.
            return
        }
        // The umask can only take bits away from 0600, but say it outright.
        fchmod(fd, 0o600)
        close(fd)
    }

    deinit {
        for s in statements.values { sqlite3_finalize(s) }
        sqlite3_close_v2(db)
    }

    /// Runs SQL text (several statements allowed, rows ignored).
    func exec(_ sql: String) throws(StorageError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql) }
    }

    /// Runs one statement and calls `row` for each result row.
    func query(_ sql: String, _ args: [SQLValue] = [], row: (SQLiteRow) throws(StorageError) -> Void = { _ in }) throws(StorageError) {
        let stmt = try prepared(sql)
        defer {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
        }
        for (i, arg) in args.enumerated() {
            let n = Int32(i + 1)
            let rc: Int32
            switch arg {
            case .int(let v): rc = sqlite3_bind_int64(stmt, n, v)
            case .null: rc = sqlite3_bind_null(stmt, n)
            case .text(let s):
                // Explicit length: the bytes go in as they are, U+0000 included.
                var s = s
                rc = s.withUTF8 { b in
                    guard let base = b.baseAddress, b.count > 0 else { return sqlite3_bind_text(stmt, n, "", 0, sqliteTransient) }
                    return sqlite3_bind_text(stmt, n, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                             Int32(b.count), sqliteTransient)
                }
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw error(rc, sql) }
            try row(SQLiteRow(stmt: stmt))
        }
    }

    /// The first column of the first row as an integer, nil when there is no row.
    func integer(_ sql: String, _ args: [SQLValue] = []) throws(StorageError) -> Int64? {
        var value: Int64?
        try query(sql, args) { r in value = r.int(0) }
        return value
    }

    private func prepared(_ sql: String) throws(StorageError) -> OpaquePointer {
        if let s = statements[sql] { return s }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql) }
        statements[sql] = stmt
        return stmt
    }

    private func error(_ rc: Int32, _ sql: String) -> StorageError {
        let message = "\(String(cString: sqlite3_errmsg(db))) (SQLite \(rc)) in: \(sql.prefix(80))"
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: return .transient(message)
        // What was written is what SQLite refuses (too big, a constraint, a type): the fault
        // of the mutation that wrote it.
        case SQLITE_TOOBIG, SQLITE_CONSTRAINT, SQLITE_MISMATCH: return .refused(message)
        default: return .failed(message)
        }
    }
}

/// The current row of a stepping statement.
struct SQLiteRow {
    let stmt: OpaquePointer

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }

    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(stmt, column) != SQLITE_NULL, let p = sqlite3_column_text(stmt, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, column))), as: UTF8.self)
    }
}

/// SQLITE_TRANSIENT: SQLite copies the bound bytes (the C macro does not come through).
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
