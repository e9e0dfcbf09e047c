import OptimistCore
import OptimistModel
import OptimistSQLite

/// Opening stores: in memory, or on a SQLite file.
extension Store {
    /// Opens a store: `nil` is an in-memory store; a path is a SQLite store file, created if absent
    /// (mode 0600).
    ///
    /// A file-backed store keeps its confirmed records in the file and reads them on demand,
    /// through a cache of at most `cacheBytes` of parsed records (default
    /// ``/OptimistCore/defaultCacheBytes``, 32 MiB; larger values are clamped to
    /// ``/OptimistCore/maximumCacheBytes``). Opening reads only what is pending (the not-yet-ended
    /// mutations) and the views, which the file keeps with their values: it costs O(pending
    /// mutations), not O(records). An in-memory store keeps its records as compact JSON bytes
    /// behind the same cache. The records gets found are kept too, at most `cacheBytes` of
    /// them (mostly the same records, shared), so that a repeated get takes no lock.
    ///
    /// A file-backed store writes in the background: `mutate` and friends return before the disk
    /// write, a writer thread commits what they changed in batches (WAL mode, `synchronous=NORMAL`:
    /// each commit survives the process being killed), and ``/OptimistCore/Store/flush()`` returns
    /// once everything before it is committed with an fsync (`synchronous=FULL`), so it also
    /// survives a power loss. ``/OptimistCore/Store/close()`` flushes and releases the file. The
    /// file is held exclusively while open (a second opener, in this process or another, gets
    /// `BUSY`). After a crash, new mutation ids skip `SQLiteStoreFile.idGapAfterCrash` ids, so an
    /// id that reached a server but never the disk is not reused.
    ///
    /// - Throws: `.misuse` when `cacheBytes` is not positive; `.io` when the path cannot be
    ///   created or written; `.corrupt` when the file is not an Optimist store or is damaged;
    ///   `.busy` when the file is open elsewhere.
    public static func open(path: String?, retryPolicy: RetryPolicy = RetryPolicy(),
                            cacheBytes: Int = defaultCacheBytes) throws(OptimistError) -> Store {
        let budget = try Store.checkedCacheBytes(cacheBytes)
        guard let path else { return try Store(retryPolicy: retryPolicy, cacheBytes: budget) }
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path, cacheBytes: budget)
        do {
            return try Store(restoring: snapshot, storage: storage, sink: journal, retryPolicy: retryPolicy)
        } catch {
            try? journal.close()
            throw error
        }
    }
}
