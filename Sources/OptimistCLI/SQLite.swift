import CSQLite

/// A read-only SQLite connection to the tool's private copy of a store file, and its
/// statements. Nothing here writes: the connection is opened `SQLITE_OPEN_READONLY` (except to
/// roll back a half-written transaction left in the copy, see ``open(_:rollingBack:)``).
final class Database {
    let handle: OpaquePointer

    /// Opens `path` read-only; with `rollingBack`, read-write, so that SQLite can undo the
    /// interrupted transaction a copied rollback journal describes (in the copy only).
    init(_ path: String, rollingBack: Bool) throws(CLIError) {
        var db: OpaquePointer?
        let flags = (rollingBack ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw .unreadable("SQLite cannot open it: \(message)")
        }
        handle = db
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) throws(CLIError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw failure(rc) }
    }

    func prepare(_ sql: String, _ bindings: String...) throws(CLIError) -> Row {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw failure(rc) }
        let row = Row(stmt, self)
        for (i, text) in bindings.enumerated() { row.bind(Int32(i + 1), text) }
        return row
    }

    /// The first column of the first row, as an integer (nil: no row).
    func integer(_ sql: String) throws(CLIError) -> Int64? {
        let r = try prepare(sql)
        return try r.step() ? r.int64(0) : nil
    }

    /// The names of `table`'s columns; empty when there is no such table.
    func columns(_ table: String) throws(CLIError) -> Set<String> {
        let r = try prepare("SELECT name FROM pragma_table_info(?)", table)
        var names = Set<String>()
        while try r.step() { names.insert(r.text(0) ?? "") }
        return names
    }

    /// A failed call as the tool reports it: a file that is not (or no longer) a well-formed
    /// database is damaged; anything else is SQLite's own message.
    func failure(_ rc: Int32) -> CLIError {
        let message = String(cString: sqlite3_errmsg(handle))
        switch rc & 0xff {
        case SQLITE_NOTADB: return .notAStore("it is not a SQLite database (\(message))")
        case SQLITE_CORRUPT, SQLITE_FORMAT: return .damaged("SQLite says: \(message)")
        default: return .unreadable("SQLite says: \(message) (\(rc))")
        }
    }
}

/// A prepared statement and its current row.
final class Row {
    private let stmt: OpaquePointer
    private let db: Database

    fileprivate init(_ stmt: OpaquePointer, _ db: Database) {
        self.stmt = stmt
        self.db = db
    }

    deinit { sqlite3_finalize(stmt) }

    fileprivate func bind(_ i: Int32, _ text: String) {
        // SQLITE_TRANSIENT (-1): SQLite copies the bytes.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let bytes = Array(text.utf8) + [0]
        _ = bytes.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(stmt, i, $0.baseAddress, Int32(bytes.count - 1), transient) }
        }
    }

    /// Steps once: true when a row is ready, false when done.
    func step() throws(CLIError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw db.failure(rc)
    }

    func int64(_ c: Int32) -> Int64 { sqlite3_column_int64(stmt, c) }
    func isNull(_ c: Int32) -> Bool { sqlite3_column_type(stmt, c) == SQLITE_NULL }
    func isBlob(_ c: Int32) -> Bool { sqlite3_column_type(stmt, c) == SQLITE_BLOB }

    /// A text column (nil when NULL); bytes that are not UTF-8 are repaired, not trusted.
    func text(_ c: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, c) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, c))), as: UTF8.self)
    }

    /// A column's raw bytes (text or blob), valid until the next step.
    func bytes(_ c: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = sqlite3_column_blob(stmt, c) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_column_bytes(stmt, c)))
    }
}
