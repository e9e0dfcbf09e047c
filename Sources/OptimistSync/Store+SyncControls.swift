import OptimistCore
import OptimistModel

/// The sync's controls on a store. One sync runs per store, on a thread the library owns,
/// until ``stopSync()`` or the store's `close`.
extension Store {
    /// Starts the sync with `transport` (`options.transport` wins when set).
    ///
    /// - Throws: `.misuse` when a sync already runs, the store is closed, or an option is
    ///   bad (no URL and no transport, a URL that is not http(s), a batch of 0, …).
    package func startSync(_ options: SyncOptions, defaultTransport: @autoclosure () -> any SyncTransport,
                           clock: @escaping @Sendable () -> Int64) throws(OptimistError) {
        guard !isClosed else { throw .misuse("the store is closed") }
        if isReadOnly { throw Store.readOnlyRefusal }
        if isLocalOnly { throw .misuse("this store is local-only: it has no server to sync with (open it without local-only to sync)") }
        if attachment != nil { throw .misuse("a sync is already running on this store") }
        let o = try options.validated()
        _ = try SyncRunner.start(store: self, options: o, transport: o.transport ?? defaultTransport(), clock: clock)
    }

    private var runner: SyncRunner? { attachment as? SyncRunner }

    private func requireRunner() throws(OptimistError) -> SyncRunner {
        guard !isClosed else { throw .misuse("the store is closed") }
        guard let r = runner else { throw .misuse("no sync is running on this store (sync_start first)") }
        return r
    }

    /// Stops the sync; a request in progress is cancelled and its mutations stay queued.
    /// No sync running: nothing happens.
    public func stopSync() {
        runner?.stop()
    }

    /// The app's "online again": push and pull at once, forgetting any backoff.
    public func syncNow() throws(OptimistError) { try requireRunner().syncNow() }

    /// Replaces the headers sent with every request (a refreshed token); lifts an
    /// `unauthorized` pause.
    public func setSyncHeaders(_ headers: [SyncHeader]) throws(OptimistError) { try requireRunner().setHeaders(headers) }

    /// Waits until nothing is pending or inflight (failed mutations excepted) and a pull has
    /// completed after the last push. False when `timeoutMs` passes first.
    public func waitForSyncIdle(timeoutMs: Int64) throws(OptimistError) -> Bool {
        try requireRunner().waitIdle(timeoutMs: timeoutMs)
    }

    /// The sync's status; `stopped` when none runs.
    public var syncStatus: SyncStatus {
        if let r = runner { return r.status }
        let counts = (try? outboxCounts()) ?? OutboxCounts()
        return SyncStatus(state: .stopped, pending: counts.pending, inflight: counts.inflight, failed: counts.failed,
                          cursor: try? syncCursor())
    }

    /// Calls `listener` on the sync's thread with every new status, until removed.
    public func addSyncListener(_ listener: @escaping @Sendable (SyncStatus) -> Void) throws(OptimistError) -> UInt64 {
        try requireRunner().addListener(listener)
    }

    public func removeSyncListener(_ id: UInt64) {
        runner?.removeListener(id)
    }

    /// The sync's statuses as they change, starting with the current one; ends when the sync
    /// stops or the consumer stops iterating.
    public func syncStates() throws(OptimistError) -> AsyncStream<SyncStatus> {
        let r = try requireRunner()
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(64))
        continuation.yield(r.status)
        let id = r.addListener { s in
            continuation.yield(s)
            if s.state == .stopped { continuation.finish() }
        }
        continuation.onTermination = { [weak r] _ in r?.removeListener(id) }
        return stream
    }
}
