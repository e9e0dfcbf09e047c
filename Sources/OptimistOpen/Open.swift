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
    /// `localOnly` opens a store with no server: the store is its own authority. Each mutation
    /// commits once the background writer has it on disk (in memory: at once), with no commit
    /// loop of yours: when ``/OptimistCore/Store/flush()`` returns, every mutation made before
    /// it is committed, and one the file held pending at the open commits at the open. A
    /// failed disk write settles the mutations it held by their policy: rolled back (cause
    /// `.rollback`), or kept visible as failed under `.keep` (cause `.fail`), with the failure
    /// as their `lastError`. A local-only store has no outbox to send: `outboxNext`,
    /// `outboxWait`, `dueMutations` and `startSync` are `.misuse`. It is given at each open;
    /// the file does not remember it.
    ///
    /// ```swift
    /// // A habit tracker with no server: taps are saved, nothing is sent.
    /// let store = try Store.open(path: dir + "/habits.db", localOnly: true)
    /// try store.mutate([.incr(collection: "habits", key: "run", field: "count", delta: 1)])
    /// ```
    ///
    /// `readOnly` opens a store file that another process may have open (a widget or an
    /// extension beside its app, the CLI, a test), without waiting for it or disturbing it: the
    /// store shows the file as it was at the open, everything the other process had flushed by
    /// then (its not-yet-ended mutations too, as the visible state). Reads, live queries and
    /// subscriptions work; every change is `.misuse`. The open copies the file and its log to
    /// a private temporary directory (`TMPDIR`; O(file size)), removed at the close; open again
    /// to see later changes.
    ///
    /// ```swift
    /// // In the widget: the app's store, in their shared App Group container.
    /// let store = try Store.open(path: groupURL.appendingPathComponent("app.db").path, readOnly: true)
    /// let today = try store.scan("logs", prefix: "2026-11-27/")
    /// ```
    ///
    /// - Throws: `.misuse` when `cacheBytes` is not positive, or `readOnly` with no path or
    ///   with `localOnly`; `.io` when the path cannot be created or written (read-only: read);
    ///   `.corrupt` when the file is not an Optimist store or is damaged; `.busy` when the file
    ///   is open elsewhere (never for `readOnly`).
    public static func open(path: String?, retryPolicy: RetryPolicy = RetryPolicy(),
                            cacheBytes: Int = defaultCacheBytes, localOnly: Bool = false,
                            readOnly: Bool = false) throws(OptimistError) -> Store {
        let budget = try Store.checkedCacheBytes(cacheBytes)
        if readOnly {
            guard let path else { throw .misuse("read-only needs a store file's path (an in-memory store has nothing to read)") }
            guard !localOnly else { throw .misuse("a store opened read-only takes no mutations: local-only means nothing there") }
            let (snapshot, journal, storage) = try SQLiteStoreFile.openReadOnly(path: path, cacheBytes: budget)
            let store: Store
            do {
                store = try Store(restoring: snapshot, storage: storage, sink: journal, retryPolicy: retryPolicy)
            } catch {
                try? journal.close()
                throw error
            }
            do throws(OptimistError) { try store.becomeReadOnly() } catch {
                try? store.close()
                throw error
            }
            return store
        }
        let store: Store
        if let path {
            let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path, cacheBytes: budget)
            do {
                store = try Store(restoring: snapshot, storage: storage, sink: journal, retryPolicy: retryPolicy)
            } catch {
                try? journal.close()
                throw error
            }
        } else {
            store = try Store(retryPolicy: retryPolicy, cacheBytes: budget)
        }
        guard localOnly else { return store }
        do throws(OptimistError) { try store.becomeLocalOnly() } catch {
            try? store.close()
            throw error
        }
        return store
    }
}
