import OptimistModel
/// Local-only stores: no server, the store is its own authority. A mutation commits once it is
/// on disk (in memory: at once); a failed write rolls it back, or fails it under `.keep`.
extension Store {
    /// Makes this store local-only: called once, by the open, before the store is handed out.
    /// In memory, each mutate commits at once (see ``mutate(_:dedupeKey:policy:)``); on a
    /// store file, a ``LocalCommitter`` commits what the writer has on disk, and the mutations
    /// the file held pending at the open commit now (they are on disk).
    package func becomeLocalOnly() throws(OptimistError) {
        localOnlyFlag.store(sink == nil ? 1 : 2, ordering: .releasing)
        guard sink != nil else {
            try commitLocal(try pendingLocal())
            return
        }
        // Inflight ones (a file a sync used before) have no sender any more: back to pending.
        try change(.sync) { e in e.requeueInflight() }
        let committer = LocalCommitter(store: self)
        try attach(committer)
        guard committer.start() else {
            detach(committer)
            throw .internal("could not start the local-only store's committing thread")
        }
        try commitLocal(try pendingLocal())
    }

    /// Whether this store was opened local-only.
    public var isLocalOnly: Bool { localOnlyFlag.load(ordering: .acquiring) != 0 }

    /// Local-only in memory: mutations commit as they are made.
    @inline(__always) var commitsAtOnce: Bool { localOnlyFlag.load(ordering: .relaxed) == 1 }

    /// The refusal of a call that sends: a local-only store has no outbox to send.
    package static let localOnlyHasNoOutbox = OptimistError.misuse("this store is local-only: its mutations commit once on disk, with no outbox to send")

    /// One round of the local authority: what is pending now, once the file holds it,
    /// committed; a failed write settles those mutations by their policy, and is thrown.
    package func settleLocal() throws(OptimistError) {
        let ids = try pendingLocal()
        guard !ids.isEmpty else { return }
        do throws(OptimistError) { try flushJournal(reportingEarlier: false) } catch {
            if case .misuse = error { throw error }   // closed meanwhile
            try failLocal(ids, reason: error.message)
            throw error
        }
        try commitLocal(ids)
    }

    /// The pending mutations' ids, in id order.
    func pendingLocal() throws(OptimistError) -> [MutationID] {
        try read { e in
            var ids: [MutationID] = []
            for m in e.live.values where m.record.status == .pending { ids.append(m.record.id) }  // in id order
            return ids
        }
    }

    /// Commits those of `ids` still pending, their own ops, in one change.
    func commitLocal(_ ids: [MutationID]) throws(OptimistError) {
        guard !ids.isEmpty else { return }
        try change(.commit) { e throws(OptimistError) in
            for id in ids {
                guard let m = e.live[MutationKey(id)], m.record.status == .pending else { continue }
                try e.commit(id, serverOps: nil)
            }
        }
    }

    /// Fails those of `ids` still pending for good with `reason`: each rolls back (cause
    /// `rollback`) or, under `.keep`, stays visible as failed (cause `fail`).
    func failLocal(_ ids: [MutationID], reason: String) throws(OptimistError) {
        try change(.fail) { e throws(OptimistError) in
            for id in ids {
                guard let m = e.live[MutationKey(id)] else { continue }
                try e.prefetch(m.touched)
                e.failLocally(m, reason: reason)
            }
        }
    }
}

