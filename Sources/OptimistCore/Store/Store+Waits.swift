import OptimistModel
/// Waiting for the store to change, without polling: one mutation's end, or work for a
/// sender that the app drives itself.
extension Store {
    /// Waits until mutation `id` settles (committed, rolled back, or failed for good under
    /// `.keep`) and returns that status, or nil when `timeoutMs` passes first (negative: no
    /// limit; 0: look once).
    ///
    /// ```swift
    /// let id = try store.mutate([.put(collection: "todos", key: "t1", value: ["title": "Milk"])])
    /// if let status = try store.waitSettled(id, timeoutMs: 5_000), status != .committed {
    ///     print("undone:", try store.mutation(id).lastError ?? "no reason given")
    /// }
    /// ```
    ///
    /// - Throws: `.notFound` for an id this store never handed out; `.misuse` when the store
    ///   is closed (also while waiting).
    public func waitSettled(_ id: MutationID, timeoutMs: Int64) throws(OptimistError) -> MutationStatus? {
        try waitSettled(id, timeoutMs: timeoutMs, stop: { false })
    }

    /// Waits until some mutation is pending (not inflight: made, retried or backing off) or
    /// `timeoutMs` passes (negative: no limit; 0: look once), and says which. It hands nothing
    /// out: ``outboxNext(now:)`` does, and judges a backing-off mutation's time.
    ///
    /// What an app that drives the outbox to its own backend waits on between sends:
    ///
    /// ```swift
    /// while try store.outboxWait(timeoutMs: -1) {
    ///     guard let m = try store.outboxNext(now: nowMs()) else { sleepUntilDue(); continue }
    ///     try upload(m)        // the app's own backend
    ///     try store.commit(m.id)
    /// }
    /// ```
    ///
    /// - Throws: `.misuse` while a sync runs (it sends the outbox itself), in a local-only
    ///   store, or when the store is closed (also while waiting).
    public func outboxWait(timeoutMs: Int64) throws(OptimistError) -> Bool {
        if isLocalOnly { throw Self.localOnlyHasNoOutbox }
        return try signal.wait(timeoutMs: timeoutMs) { () throws(OptimistError) -> Bool? in
            try read { e throws(OptimistError) -> Bool? in
                guard e.attachment == nil else { throw .misuse("a sync is running: it sends the outbox itself") }
                return e.due.isEmpty ? nil : true
            }
        } ?? false
    }

    /// Wakes every thread waiting in ``waitSettled(_:timeoutMs:)`` or
    /// ``outboxWait(timeoutMs:)`` to look again (a cancelled task's wait uses it to end).
    package func wakeWaiters() { signal.wakeAll() }

    /// ``waitSettled(_:timeoutMs:)`` that also ends, with nil, once `stop` returns true (it is
    /// asked after each wake: call ``wakeWaiters()`` after setting what it reads).
    package func waitSettled(_ id: MutationID, timeoutMs: Int64, stop: () -> Bool) throws(OptimistError) -> MutationStatus? {
        try signal.wait(timeoutMs: timeoutMs, stop: stop) { () throws(OptimistError) -> MutationStatus? in
            let s = try status(id)
            return s.isSettled ? s : nil
        }
    }

    /// Hands out the oldest due pending mutation (as ``outboxNext(now:)``), waiting for up to
    /// `timeoutMs` (negative: no limit) for one, `stop` as above; nil when none came. `now` is
    /// asked at each look. A mutation backing off becomes due with no change to wake the
    /// waiter: the caller bounds `timeoutMs` by ``OutboxCounts/nextDueAt``.
    package func outboxTake(now: () -> Int64, timeoutMs: Int64, stop: () -> Bool) throws(OptimistError) -> MutationRecord? {
        try signal.wait(timeoutMs: timeoutMs, stop: stop) { () throws(OptimistError) -> MutationRecord? in
            try outboxNext(now: now())
        }
    }
}

extension MutationStatus {
    /// Committed, rolled back, or failed for good: what ``Store/waitSettled(_:timeoutMs:)``
    /// waits for (a failed mutation changes again only by a retry or a rollback).
    public var isSettled: Bool { self == .committed || self == .rolledBack || self == .failed }
}
