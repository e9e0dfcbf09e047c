import CSQLite
import OptimistCore
import OptimistModel
import OptimistThreads

/// One SQLite connection.
///
/// Used by one thread at a time, each use holding ``gate`` (the connection is opened with
/// `SQLITE_OPEN_NOMUTEX`, so SQLite adds no locks of its own; hence `@unchecked Sendable`).
/// An open store file has two: the writer's (the opener loads through it, then the writer
/// thread writes through it) and the store's reads' (a record not in the cache, a scan, a
/// view's aggregate). In WAL mode a read sees the last commit and never waits for the writer,
/// not even for a commit that checkpoints the log into the file (long on a big batch); the
/// records the writer has not committed yet are in the store's memory (see ``SQLiteStorage``).
///
/// The command-line tool reads its private copy of a store file through one too (see
/// Sources/OptimistCLI/FileSnapshot.swift), with the `package` API here: it words SQLite's
/// failures its own way, from ``lastFailure``.
package final class Connection: @unchecked Sendable {
    let db: OpaquePointer
    private var isOpen = true
    /// Held around each use by the writer and the readers (see above).
    let gate = Monitor()
    /// The last failed call's result code and message, as SQLite gave them (set by
    /// ``failure(_:_:)``, under ``gate`` like every use). The errors thrown here are the
    /// store's kinds, which fold several codes into one (`CORRUPT` is also "not a database").
    package private(set) var lastFailure: SQLiteFailure?

    /// Opens an existing file for reading and writing (the opener creates the file itself so
    /// it can choose its mode), through the VFS named `vfs` (nil: the process's default).
    convenience init(path: String, vfs: String? = nil) throws(OptimistError) {
        let handle: OpaquePointer
        do { handle = try Connection.open(path, SQLITE_OPEN_READWRITE, vfs: vfs) } catch {
            throw Connection.error(error.code, "cannot open \(path): \(error.message)")
        }
        self.init(handle)
    }

    /// Opens an existing file read-only, or for reading and writing when `readOnly` is false,
    /// through the process's default VFS. For the command-line tool, which opens a copy of
    /// its own (read-write only to let SQLite roll back a copied journal) and words a failure
    /// from SQLite's code and message.
    package convenience init(path: String, readOnly: Bool) throws(SQLiteFailure) {
        self.init(try Connection.open(path, readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, vfs: nil))
    }

    private init(_ handle: OpaquePointer) {
        db = handle
        sqlite3_extended_result_codes(db, 1)
        // Every connection may write records, so every one can keep their indexes.
        FileIndexes.register(db)
    }

    private static func open(_ path: String, _ flags: Int32, vfs: String?) throws(SQLiteFailure) -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, vfs)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteFailure(code: rc, message: message)
        }
        return handle
    }

    deinit { close() }

    /// Runs `body` holding ``gate``.
    @inline(__always) func serially<R>(_ body: () throws(OptimistError) -> R) throws(OptimistError) -> R {
        gate.lock()
        defer { gate.unlock() }
        return try body()
    }

    /// Closes the connection (the file's last one checkpoints the WAL into the main file).
    /// Idempotent.
    func close() {
        guard isOpen else { return }
        isOpen = false
        sqlite3_close_v2(db)
    }

    /// Whether SQLite fell back to read-only (a write-protected file).
    var isReadOnly: Bool { sqlite3_db_readonly(db, "main") == 1 }

    /// Runs SQL without results (several statements allowed).
    package func exec(_ sql: String) throws(OptimistError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        if rc != SQLITE_OK { throw failure(rc, sql) }
    }

    package func prepare(_ sql: String) throws(OptimistError) -> Statement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw failure(rc, sql) }
        return Statement(stmt, connection: self)
    }

    /// The first column of the first row of a query (for pragmas and counts).
    ///
    /// The statement is stepped to its end before it is let go: a pragma that changes the file
    /// (`journal_mode = WAL`) commits when it ends, and ending it by finalizing would lose that
    /// commit's error (a disk failing during open went unreported; Tests/C/faults/io_faults.c).
    package func scalarInt(_ sql: String) throws(OptimistError) -> Int64 {
        let s = try prepare(sql)
        guard try s.step() else { throw OptimistError.corrupt("\(sql): no row") }
        let value = s.int64(0)
        while try s.step() {}
        return value
    }

    func scalarText(_ sql: String) throws(OptimistError) -> String? {
        let s = try prepare(sql)
        guard try s.step() else { return nil }
        let value = s.text(0)
        while try s.step() {}
        return value
    }

    /// The names of `table`'s columns; empty when the file has no such table (a file of an
    /// older layout, or a damaged one).
    package func columns(of table: Schema.Table) throws(OptimistError) -> Set<String> {
        let s = try prepare("SELECT name FROM pragma_table_info(?)")
        s.bind(1, table.rawValue)
        var names = Set<String>()
        while try s.step() { names.insert(s.text(0) ?? "") }
        return names
    }

    /// The error for a failed call, with SQLite's message (also kept in ``lastFailure``).
    func failure(_ rc: Int32, _ what: String) -> OptimistError {
        let message = String(cString: sqlite3_errmsg(db))
        lastFailure = SQLiteFailure(code: rc, message: message)
        return Connection.error(rc, "\(what): \(message) (\(rc))")
    }

    /// Maps a SQLite result code to the store's error kinds: a file held elsewhere is BUSY,
    /// a file that is not (or no longer) a well-formed database is CORRUPT, anything the disk
    /// or the file system refused is IO.
    static func error(_ rc: Int32, _ message: String) -> OptimistError {
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: .busy(message)
        case SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_FORMAT: .corrupt(message)
        case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS,
             SQLITE_PROTOCOL, SQLITE_AUTH:
            .io(message)
        default: .internal(message)
        }
    }
}

/// A failed SQLite call as SQLite reported it: its (extended) result code and its message.
package struct SQLiteFailure: Error {
    package let code: Int32
    package let message: String

    /// The primary result code (the extended code's low byte).
    package var primaryCode: Int32 { code & 0xff }
    /// The file is not a SQLite database (`SQLITE_NOTADB`).
    package var isNotADatabase: Bool { primaryCode == SQLITE_NOTADB }
    /// The file is a damaged database (`SQLITE_CORRUPT`, `SQLITE_FORMAT`).
    package var isDamage: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_FORMAT }
}
