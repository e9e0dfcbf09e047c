import OptimistSQLite

/// Opening stores: in memory, or on a SQLite file.
extension Store {
    /// Opens a store: `nil` is an in-memory store; a path is a SQLite store file, created if
    /// absent (mode 0600) and held exclusively until ``Store/close()``.
    ///
    /// - Throws: `.io` when the path cannot be created or written; `.corrupt` when the file is
    ///   not an Optimist store or is damaged; `.busy` when the file is open elsewhere.
    public static func open(path: String?, retryPolicy: RetryPolicy = RetryPolicy()) throws(OptimistError) -> Store {
        guard let path else { return Store(retryPolicy: retryPolicy) }
        let (snapshot, journal) = try SQLiteStoreFile.open(path: path)
        return Store(restoring: snapshot, sink: journal, retryPolicy: retryPolicy)
    }
}
