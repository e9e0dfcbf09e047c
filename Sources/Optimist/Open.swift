import OptimistSQLite

/// Opening stores: in memory, or on a SQLite file.
extension Store {
    /// Opens a store: `nil` is an in-memory store; a path is a SQLite store file, created if
    /// absent (mode 0600).
    ///
    /// A file-backed store writes in the background: `mutate` and friends return before the
    /// disk write, a writer thread commits what they changed in batches (WAL mode,
    /// `synchronous=NORMAL`: each commit survives the process being killed), and ``flush()``
    /// returns once everything before it is committed with an fsync (`synchronous=FULL`), so
    /// it also survives a power loss. ``close()`` flushes and releases the file. The file is
    /// held exclusively while open (a second opener, in this process or another, gets `BUSY`).
    /// After a crash, new mutation ids skip ``SQLiteStoreFile/idGapAfterCrash`` ids, so an id
    /// that reached a server but never the disk is not reused.
    ///
    /// - Throws: `.io` when the path cannot be created or written; `.corrupt` when the file is
    ///   not an Optimist store or is damaged; `.busy` when the file is open elsewhere.
    public static func open(path: String?, retryPolicy: RetryPolicy = RetryPolicy()) throws(OptimistError) -> Store {
        guard let path else { return Store(retryPolicy: retryPolicy) }
        let (snapshot, journal) = try SQLiteStoreFile.open(path: path)
        return Store(restoring: snapshot, sink: journal, retryPolicy: retryPolicy)
    }
}
