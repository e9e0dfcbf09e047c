import CSQLite
import OptimistCore
import OptimistModel

/// Blob columns, for the ended-status chunks (``EndedChunks``) and the mutations' packed ops.
extension Statement {
    /// Binds a copy of `bytes` (SQLite's `SQLITE_TRANSIENT`, spelled -1 in C); never empty here.
    func bindBlob(_ i: Int32, _ bytes: [UInt8]) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        _ = bytes.withUnsafeBytes { sqlite3_bind_blob(stmt, i, $0.baseAddress, Int32($0.count), transient) }
    }

    /// Whether the column holds a blob (not text, a number or NULL).
    package func isBlob(_ c: Int32) -> Bool { sqlite3_column_type(stmt, c) == SQLITE_BLOB }

    /// The column's bytes as a blob (a TEXT column's too, unconverted), valid until the next
    /// step.
    package func withBlob<R, E: Error>(_ c: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        let p = sqlite3_column_blob(stmt, c)
        let n = Int(sqlite3_column_bytes(stmt, c))
        return try body(UnsafeBufferPointer(start: p?.assumingMemoryBound(to: UInt8.self), count: p == nil ? 0 : n))
    }
}
