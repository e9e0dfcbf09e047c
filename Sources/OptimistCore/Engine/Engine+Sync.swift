import OptimistModel
/// How many not-yet-ended mutations are in each status, and when the next pending one is due.
public struct OutboxCounts: Sendable, Equatable {
    public var pending = 0
    public var inflight = 0
    public var failed = 0
    /// When the first pending mutation in send order becomes due (nil: none pending). The
    /// ones after it wait for it: a client's mutations reach the server in order.
    public var nextDueAt: Int64?

    public init() {}
}

// The sync's steps. Each runs inside one store call, so readers and subscribers see a push's
// or a pull's whole effect at once.
extension Engine {
    /// Inflight mutations back to pending: the sync owns the outbox from its start, and
    /// mutations a host handed out by hand are sent again (the server drops duplicates).
    func requeueInflight() {
        for m in live.values where m.record.status == .inflight {
            m.record.status = .pending
            insertDue(m.record)
            log(.mutation(m.record))
        }
    }

    /// Up to `max` mutations for one push, in send order, now inflight: the due front of the
    /// queue. A pending mutation still backing off stops the batch, since the ones after it
    /// must not reach the server before it.
    func takeForPush(max: Int, now: Int64) -> [MutationRecord] {
        var out = [MutationRecord]()
        var taken = 0
        for entry in due {
            guard taken < max, let m = live[MutationKey(entry.id)], m.record.nextAttemptAt <= now else { break }
            taken += 1
            noteStatusChange(m, .sync)
            m.record.status = .inflight
            m.record.attempts += 1
            log(.mutation(m.record))
            out.append(m.record)
        }
        due.removeFirst(taken)
        return out
    }

    /// Applies a push's answers (ids already checked to be inflight, in the order sent).
    func settlePush(_ results: [PushResult], now: Int64) throws(OptimistError) {
        // Every record the answers can touch, read before anything changes.
        for result in results {
            let id = result.id, outcome = result.outcome
            guard let m = live[MutationKey(id)] else { continue }
            try prefetch(m.touched)
            if case .ok(let ops, let renames) = outcome {
                if let ops { try prefetch(ops) }
                for r in renames {
                    try prefetch([RecordAddress(collection: r.collection, key: r.from), RecordAddress(collection: r.collection, key: r.to)])
                }
            }
        }
        for result in results {
            let id = result.id, outcome = result.outcome
            guard let m = live[MutationKey(id)], m.record.status == .inflight else { continue }
            switch outcome {
            case .ok(let ops, let renames):
                cause = .commit
                for r in renames where r.from != r.to { rename(r) }
                // Canonical ops the confirmed state cannot take are the server's bug; the
                // mutation still went through, so its own ops stand in until the next pull.
                if let ops, (try? commit(id, serverOps: ops)) != nil { continue }
                try? commit(id, serverOps: nil)
            case .rejected(let error):
                cause = m.record.policy == .rollback ? .rollback : .fail
                noteStatusChange(m, cause)
                m.record.lastError = error
                failForGood(m)
            case .retry(let afterMs, let error):
                cause = .fail
                noteStatusChange(m, .fail)
                m.record.lastError = error ?? "the server asked to retry later"
                if m.record.attempts < retryPolicy.maxAttempts {
                    backOff(m, now: now, wait: afterMs ?? backoff(m.record))
                } else {
                    failForGood(m)
                }
            }
        }
    }

    /// Moves a record and its pending layers from a temporary key to the server's: every
    /// not-ended mutation's ops on the old key are rewritten (so a later edit is sent under the
    /// real key), the chains merge in mutation order, and both keys are reported.
    func rename(_ r: KeyRename) {
        let c = collection(r.collection)
        noteTouch(c, r.from)
        noteTouch(c, r.to)
        guard let moving = c.chains.removeValue(forKey: r.from) else { return }
        for id in moving {
            guard let m = live[MutationKey(id)] else { continue }
            var record = m.record
            record.ops = record.ops.map { op in
                guard op.collection == r.collection, op.key == r.from else { return op }
                switch op {
                case .put(let coll, _, let v): return .put(collection: coll, key: r.to, value: v)
                case .patch(let coll, _, let v): return .patch(collection: coll, key: r.to, value: v)
                case .delete(let coll, _): return .delete(collection: coll, key: r.to)
                case .incr(let coll, _, let f, let d): return .incr(collection: coll, key: r.to, field: f, delta: d)
                }
            }
            live[MutationKey(id)] = LiveMutation(record: record)   // its touched list changes
            log(.mutation(record))
        }
        var merged = Array(c.chains[r.to] ?? PendingChain())
        merged.append(contentsOf: moving)
        merged.sort()   // chains are in mutation order, which is id order
        var chain = PendingChain()
        for id in merged where chain.allSatisfy({ $0 != id }) { chain.append(id) }
        c.chains[r.to] = chain
        if confirmedRecord(c.name, r.from) != nil { confirm([(c, r.from, nil)]) }
        recompute(c, r.from)
        recompute(c, r.to)
    }

    /// Mutations whose request got no answer (or whose answer did not mention them): back to
    /// pending, due at once, the attempt not counted.
    func unsend(_ ids: [MutationID]) {
        cause = .sync
        for id in ids {
            guard let m = live[MutationKey(id)], m.record.status == .inflight else { continue }
            noteStatusChange(m, .sync)
            m.record.status = .pending
            m.record.attempts = Swift.max(0, m.record.attempts - 1)
            insertDue(m.record)
            log(.mutation(m.record))
        }
    }

    /// Applies one pull as one step: `changes` into the confirmed state, the outcomes' mutations
    /// ended as the server decided without folding their ops again (their effect is in
    /// `changes`), pending mutations re-applied on top, the new cursor recorded.
    func applyPull(changes: [Op], outcomes: [PullOutcome], cursor: String?) throws(OptimistError) {
        cause = .server
        try prefetchPullOutcomes(outcomes)
        try serverApply(changes)
        applyPullOutcomes(outcomes, cursor: cursor)
    }

    /// Reads the records of the mutations a pull settles, before the pull changes anything.
    func prefetchPullOutcomes(_ outcomes: [PullOutcome]) throws(OptimistError) {
        for o in outcomes { if let m = live[MutationKey(o.id)] { try prefetch(m.touched) } }
    }

    /// A pull's second half, once its changes are confirmed: the mutations it settles, and
    /// its cursor.
    func applyPullOutcomes(_ outcomes: [PullOutcome], cursor: String?) {
        for o in outcomes {
            let id = o.id, outcome = o.outcome
            guard let m = live[MutationKey(id)], m.record.status != .inflight else { continue }
            switch outcome {
            case .ok:
                cause = .commit
                end(m, as: .committed)
                recompute(m.touched)
            case .rejected(let error):
                cause = m.record.policy == .rollback ? .rollback : .fail
                noteStatusChange(m, cause)
                m.record.lastError = error
                if m.record.status == .pending { removeDue(m) }
                failForGood(m)
            }
        }
        if cursor != syncCursor {
            syncCursor = cursor
            log(.syncCursor(cursor))
        }
        // A staged round's changes were in this pull's: the round ends with it, in the same
        // journal append, so a store file holds either the round staged or the round applied.
        endPullRound()
    }

    func outboxCounts() -> OutboxCounts {
        var counts = OutboxCounts()
        counts.pending = due.count
        if let first = due.first { counts.nextDueAt = live[MutationKey(first.id)]?.record.nextAttemptAt }
        for m in live.values {
            switch m.record.status {
            case .inflight: counts.inflight += 1
            case .failed: counts.failed += 1
            default: break
            }
        }
        return counts
    }

    /// The first `limit` not-ended mutations that are not kept failures, in send order.
    func queued(limit: Int) -> [MutationRecord] {
        var out = [MutationRecord]()
        for entry in due.prefix(limit) {
            if let m = live[MutationKey(entry.id)] { out.append(m.record) }
        }
        return out
    }
}
