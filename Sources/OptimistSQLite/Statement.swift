import CSQLite
import OptimistCore
import OptimistModel

/// SQLite's "copy the bytes now" destructor, which the C macro `SQLITE_TRANSIENT` spells as -1.
private var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// A prepared statement, reused across rows and batches (prepared once, bound per row).
package final class Statement {
    let stmt: OpaquePointer
    private unowned let connection: Connection

    init(_ stmt: OpaquePointer, connection: Connection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(stmt) }

    func bind(_ i: Int32, _ v: Int64) { sqlite3_bind_int64(stmt, i, v) }
    func bind(_ i: Int32, _ v: Int) { sqlite3_bind_int64(stmt, i, Int64(v)) }
    func bindNull(_ i: Int32) { sqlite3_bind_null(stmt, i) }

    package func bind(_ i: Int32, _ s: String?) {
        guard var s else { sqlite3_bind_null(stmt, i); return }
        _ = s.withUTF8 { buf in
            // An empty buffer may have no base address, which SQLite would take for NULL.
            if buf.isEmpty {
                sqlite3_bind_text(stmt, i, "", 0, transient)
            } else {
                buf.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(stmt, i, $0.baseAddress, Int32($0.count), transient) }
            }
        }
    }

    func bind(_ i: Int32, _ k: Key) { bind(i, k.string) }

    /// Binds bytes as TEXT without checking them (a key range's bound may not be UTF-8;
    /// SQLite compares TEXT bytewise with the default collation).
    func bindText(_ i: Int32, bytes: [UInt8]) {
        precondition(!bytes.isEmpty, "a bound is never empty")
        _ = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(stmt, i, $0.baseAddress, Int32($0.count), transient) }
        }
    }

    func double(_ c: Int32) -> Double { sqlite3_column_double(stmt, c) }

    /// Steps once: true when a row is ready, false when done.
    package func step() throws(OptimistError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let e = connection.failure(rc, String(cString: sqlite3_sql(stmt)))
        sqlite3_reset(stmt)
        throw e
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    func run() throws(OptimistError) {
        defer { reset() }
        while try step() {}
    }

    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Runs a statement whose every other parameter the caller bound for this row, with
    /// `bytes` bound as a BLOB at `i` without a copy: a row's biggest value (a mutation's
    /// packed ops), which SQLite would otherwise copy into a buffer of its own and free again.
    /// The bytes are unbound before this returns (SQLite keeps only their address), and the
    /// other bindings are not cleared: the next row binds them all again.
    func run(blob bytes: [UInt8], at i: Int32) throws(OptimistError) {
        try bytes.withUnsafeBufferPointer { buf throws(OptimistError) in try run(buf, at: i, blob: true) }
    }

    /// A statement run as ``run(blob:at:)`` runs it, with `bytes` bound as TEXT (a record's
    /// JSON) and two strings also bound without a copy (its collection and key): a string's
    /// bytes may live only for the closure that reads them (a short string's are copied out
    /// of the value), so the statement runs inside all three.
    func run(text a: String, at i: Int32, _ b: String, at j: Int32, _ bytes: [UInt8], at k: Int32) throws(OptimistError) {
        var a = a, b = b
        var failure: OptimistError?  // `withUTF8` rethrows untyped errors
        a.withUTF8 { x in
            b.withUTF8 { y in
                bytes.withUnsafeBufferPointer { z in
                    bindNoCopy(i, x)
                    bindNoCopy(j, y)
                    defer {
                        sqlite3_bind_null(stmt, i)
                        sqlite3_bind_null(stmt, j)
                    }
                    do throws(OptimistError) { try run(z, at: k, blob: false) } catch { failure = error }
                }
            }
        }
        if let failure { throw failure }
    }

    /// Runs a statement with several rows' TEXT in one buffer, each bound in place: row `n`'s
    /// bytes end at `ends[n]` (and start where the row before ends) and go to parameter
    /// `parameter(n)`. The caller bound every other parameter for this run; the texts are
    /// unbound before this returns, as in ``run(blob:at:)``. With `blobs`, the bytes are bound
    /// as BLOBs instead (mutations' packed ops).
    func run(texts: [UInt8], ends: [Int], blobs: Bool = false, parameter: (Int) -> Int32) throws(OptimistError) {
        try texts.withUnsafeBufferPointer { all throws(OptimistError) in
            var start = 0
            for (n, end) in ends.enumerated() {
                let bytes = UnsafeBufferPointer(rebasing: all[start..<end])
                if blobs { bindBlobNoCopy(parameter(n), bytes) } else { bindNoCopy(parameter(n), bytes) }
                start = end
            }
            defer {
                sqlite3_reset(stmt)
                for n in ends.indices { sqlite3_bind_null(stmt, parameter(n)) }
            }
            while try step() {}
        }
    }

    /// Binds bytes as TEXT by address only. An empty buffer (which may have no address,
    /// which SQLite takes for NULL) is bound as the empty string, copied.
    private func bindNoCopy(_ i: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.isEmpty { sqlite3_bind_text(stmt, i, "", 0, transient); return }
        bytes.withMemoryRebound(to: CChar.self) { _ = sqlite3_bind_text(stmt, i, $0.baseAddress, Int32($0.count), nil) }
    }

    /// Binds bytes as a BLOB by address only; the packed ops bound here are never empty.
    private func bindBlobNoCopy(_ i: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        _ = sqlite3_bind_blob(stmt, i, bytes.baseAddress, Int32(bytes.count), nil)
    }

    private func run(_ buf: UnsafeBufferPointer<UInt8>, at i: Int32, blob: Bool) throws(OptimistError) {
        if blob { bindBlobNoCopy(i, buf) } else { bindNoCopy(i, buf) }
        defer {
            sqlite3_reset(stmt)
            sqlite3_bind_null(stmt, i)
        }
        while try step() {}
    }

    package func int64(_ c: Int32) -> Int64 { sqlite3_column_int64(stmt, c) }
    package func isNull(_ c: Int32) -> Bool { sqlite3_column_type(stmt, c) == SQLITE_NULL }

    /// A TEXT column (nil when NULL); bytes that are not UTF-8 are repaired, not trusted.
    package func text(_ c: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, c) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, c))), as: UTF8.self)
    }

    /// The column's UTF-8 bytes, valid until the next step (parsed in place, never copied).
    func withBytes<R>(_ c: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(OptimistError) -> R) throws(OptimistError) -> R {
        let p = sqlite3_column_text(stmt, c)
        let n = Int(sqlite3_column_bytes(stmt, c))
        return try body(UnsafeBufferPointer(start: p, count: p == nil ? 0 : n))
    }
}
