import OptimistModel
/// The store calls the sync makes: each step is one atomic store call.
extension Store {
    /// See ``Engine/requeueInflight()``.
    package func syncRequeueInflight() throws(OptimistError) {
        try change(.sync) { e in e.requeueInflight() }
    }

    /// Up to `max` due mutations in send order, now inflight.
    package func syncTake(max: Int, now: Int64) throws(OptimistError) -> [MutationRecord] {
        try change(.sync) { e in e.takeForPush(max: max, now: now) }
    }

    /// Applies a push's answers.
    package func syncSettle(_ results: [PushResult], now: Int64) throws(OptimistError) {
        try change(.commit) { e throws(OptimistError) in try e.settlePush(results, now: now) }
    }

    /// Inflight mutations back to pending, uncounted.
    package func syncUnsend(_ ids: [MutationID]) throws(OptimistError) {
        guard !ids.isEmpty else { return }
        try change(.sync) { e in e.unsend(ids) }
    }

    /// Applies one pull atomically (see ``Engine/applyPull(changes:outcomes:cursor:)``).
    package func syncApplyPull(changes: [Op], outcomes: [PullOutcome], cursor: String?) throws(OptimistError) {
        if changes.count >= stagingThreshold { return try changeStaged(changes, outcomes: outcomes, cursor: cursor) }
        try change(.server) { e throws(OptimistError) in try e.applyPull(changes: changes, outcomes: outcomes, cursor: cursor) }
    }

    /// The pull cursor persisted with the store (nil before the first pull).
    public func syncCursor() throws(OptimistError) -> String? {
        try read { e in e.syncCursor }
    }

    /// Counts of not-yet-ended mutations by status.
    public func outboxCounts() throws(OptimistError) -> OutboxCounts {
        try read { e in e.outboxCounts() }
    }

    /// The first `limit` queued (pending or inflight-to-be) mutations, in send order.
    package func syncQueued(limit: Int) throws(OptimistError) -> [MutationRecord] {
        try read { e in e.queued(limit: limit) }
    }
}
