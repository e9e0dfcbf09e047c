import OptimistModel
extension Engine {
    /// Takes live mutation `m` out of the send queue, its record read in place (a copy of the
    /// record, to read two numbers, retained its ops and strings: once per commit).
    func removeDue(_ m: LiveMutation) { due.remove(DueEntry(id: m.record.id, queuePosition: m.record.queuePosition)) }

    func insertDue(_ r: MutationRecord) { due.insert(DueEntry(r)) }

    /// The oldest due pending mutation, now inflight.
    func outboxNext(now: Int64) -> MutationRecord? {
        for (i, entry) in due.enumerated() {
            guard let m = live[MutationKey(entry.id)], m.record.nextAttemptAt <= now else { continue }
            due.remove(at: i)
            m.record.status = .inflight
            m.record.attempts += 1
            log(.mutation(m.record))
            return m.record
        }
        return nil
    }

    /// The backoff before the next attempt: half the exponential delay plus a random part of
    /// the other half ("equal jitter"), so clients that failed together do not retry together.
    func backoff(_ m: MutationRecord) -> Int64 {
        let d = retryPolicy.delay(afterAttempts: m.attempts)
        var x = jitterSeed &+ m.id &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(truncatingIfNeeded: m.attempts)
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        let half = d / 2
        return half + Int64(x % UInt64(d - half + 1))
    }

    /// A failed send: back to pending with backoff, or (final) the policy's rollback or keep.
    func fail(_ id: MutationID, transient: Bool, reason: String?, now: Int64) throws(OptimistError) {
        let m = try liveMutation(id)
        try prefetch(m.touched)
        switch m.record.status {
        case .inflight: break
        case .pending:
            // Sent by the host without the outbox: it still counts as an attempt.
            removeDue(m)
            m.record.attempts += 1
        default:
            throw .state("mutation \(id) is \(m.record.status), not pending or inflight")
        }
        m.record.lastError = reason
        noteStatusChange(m, .fail)
        if transient && m.record.attempts < retryPolicy.maxAttempts {
            backOff(m, now: now, wait: backoff(m.record))
            return
        }
        failForGood(m)
    }

    /// A local-only store's pending mutation whose write failed: settled by its policy at
    /// once (no retries: the disk is the authority), its change's cause the policy's
    /// (`.rollback`, or `.fail` for a kept failure), `reason` its last error.
    func failLocally(_ m: LiveMutation, reason: String) {
        guard m.record.status == .pending else { return }
        removeDue(m)
        m.record.lastError = reason
        cause = m.record.policy == .rollback ? .rollback : .fail
        noteStatusChange(m, cause)
        failForGood(m)
    }

    /// Back to pending, due `wait` ms after `now`.
    func backOff(_ m: LiveMutation, now: Int64, wait: Int64) {
        m.record.status = .pending
        let at = now.addingReportingOverflow(max(wait, 0))
        m.record.nextAttemptAt = at.overflow ? Int64.max : at.partialValue
        insertDue(m.record)
        log(.mutation(m.record))
    }

    /// A permanent failure (or out of retries): the mutation's policy decides.
    func failForGood(_ m: LiveMutation) {
        switch m.record.policy {
        case .rollback:
            end(m, as: .rolledBack)
            recompute(m.touched)
        case .keep:
            m.record.status = .failed
            log(.mutation(m.record))
        }
    }

    /// A failed mutation is sent again, after everything already queued, with its wire retry
    /// count raised; a backing-off pending one becomes due at once, in its place.
    func retry(_ id: MutationID) throws(OptimistError) {
        let m = try liveMutation(id)
        switch m.record.status {
        case .failed:
            m.record.attempts = 0
            m.record.retry += 1
            // The next id's position sorts after every queued mutation (and before the next
            // fresh one: see ``DueEntry``).
            m.record.queuePosition = nextID
        case .pending:
            removeDue(m)
        default:
            throw .state("mutation \(id) is \(m.record.status); only failed or pending mutations can be retried")
        }
        noteStatusChange(m, .retry)
        m.record.status = .pending
        m.record.nextAttemptAt = Int64.min
        insertDue(m.record)
        log(.mutation(m.record))
    }
}
