import OptimistCore
import OptimistModel

/// A store file's live mutations, read while the store restores itself (``MutationStream``):
/// one thread reads the rows (``count()``, ``readRows(into:limit:)``), another parses them
/// (``decode(_:_:)``), so that on two cores a reopen with many pending overlaps its halves.
///
/// The rows are read through a connection of its own, in one read transaction, which is closed
/// once the last row is read (or when the loader goes away). A row that does not decode (an
/// unknown status or policy when it is read, its ops when they are parsed) is `CORRUPT`.
final class MutationLoader: MutationStream, @unchecked Sendable {
    private var connection: Connection?
    private var rows: Statement?

    /// The loader owns `connection` from here on.
    init(connection: Connection) { self.connection = connection }

    deinit { end() }

    func count() throws(OptimistError) -> Int {
        try begin()
        guard let c = connection else { return 0 }
        return Int(try c.scalarInt("SELECT count(*) FROM mutations"))
    }

    func readRows(into out: inout StoredMutations, limit: Int) throws(OptimistError) -> Bool {
        out.removeAll()
        try begin()
        guard let s = rows else { return false }
        while out.rows.count < limit {
            guard try s.step() else {
                end()
                return false
            }
            let mutation: MutationRecord
            do { mutation = try MutationRows.mutation(s) } catch {
                throw .corrupt("mutation \(error.id) has an unknown status or policy")
            }
            let start = out.bytes.count
            try s.withBytes(1) { out.bytes.append(contentsOf: $0) }
            out.rows.append(StoredMutationRow(mutation: mutation, ops: start..<out.bytes.count))
        }
        return true
    }

    func decode(_ stored: borrowing StoredMutations, _ take: (MutationRecord) -> Void) throws(OptimistError) {
        try stored.bytes.withUnsafeBufferPointer { (all) throws(OptimistError) in
            for row in stored.rows {
                var m = row.mutation
                m.ops = try StoredOps.decode(UnsafeBufferPointer(rebasing: all[row.ops]), id: m.id)
                take(m)
            }
        }
    }

    /// Starts the read transaction and the rows' statement, once.
    private func begin() throws(OptimistError) {
        guard rows == nil, let c = connection else { return }
        try c.exec("PRAGMA cache_size = -2000; PRAGMA mmap_size = 1073741824; BEGIN")
        rows = try c.prepare(MutationRows.query)
    }

    /// Ends the read transaction and closes the connection (idempotent).
    private func end() {
        rows = nil
        guard let c = connection else { return }
        connection = nil
        try? c.exec("COMMIT")
        c.close()
    }
}
