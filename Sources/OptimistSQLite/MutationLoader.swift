import OptimistCore

/// A store file's live mutations, read when the store restores itself (``MutationStream``):
/// the store folds them on a thread of its own while this reads the next ones, so that on two
/// cores a reopen with many pending overlaps reading and parsing the rows (about half of the
/// open) with the fold (the other half).
///
/// It reads through a connection of its own (its first ``read(expecting:_:)`` closes it), in
/// one read transaction. A row that does not decode ends the read with `CORRUPT`.
final class MutationLoader: MutationStream, @unchecked Sendable {
    private var connection: Connection?

    /// The loader owns `connection` from here on.
    init(connection: Connection) { self.connection = connection }

    deinit { connection?.close() }

    func read(expecting: (Int) -> Void, _ take: (MutationRecord) -> Bool) throws(OptimistError) {
        guard let c = connection else { return }
        connection = nil
        defer { c.close() }
        try c.exec("PRAGMA cache_size = -2000; PRAGMA mmap_size = 1073741824; BEGIN")
        defer { try? c.exec("COMMIT") }
        // The count sizes the store's tables once (and maps pages the scan reads anyway).
        expecting(Int(try c.scalarInt("SELECT count(*) FROM mutations")))
        let rows = try c.prepare(SnapshotLoader.mutationsQuery)
        while try rows.step() {
            guard take(try SnapshotLoader.mutation(rows)) else { return }
        }
    }
}
