import OptimistModel
// A pull's reply applied so that the confirmed state only ever holds states the server had
// (see ``PullRound``): pages that more follow are staged, and the page that ends the round
// applies them all with it, at once.
extension Store {
    /// The cursor the next pull sends: a staged round's progress while one is staged (a
    /// reopened store resumes its round there), else the store's sync cursor.
    package func syncPullCursor() throws(OptimistError) -> String? {
        try read { e in e.pullRound?.cursor ?? e.syncCursor }
    }

    /// The pull round staged, if any (for status and tests).
    package func syncPullRound() throws(OptimistError) -> PullRound? {
        try read { e in e.pullRound }
    }

    /// The deletes that drop every record of the collections whose name starts with one of
    /// `prefixes` (see ``Engine/dropDeletes(prefixes:staged:)``): the confirmed ones, and those
    /// the round in progress staged. The caller puts them before a page's changes and applies
    /// the page with ``syncApplyPull(changes:outcomes:cursor:more:reset:)``, so the drop is
    /// staged, applied and heard (cause `server`) as every other server change is, and pending
    /// mutations on those records stay and are refolded on nothing. Empty when the store
    /// holds nothing of them.
    package func syncDropDeletes(prefixes: [Key]) throws(OptimistError) -> [Op] {
        guard !prefixes.isEmpty else { return [] }
        // A store file's staged pages are read back from the file: its writer must have
        // written them first.
        let staging = try syncPullRound() != nil
        if staging { try flush() }
        return try read { e throws(OptimistError) in
            try e.dropDeletes(prefixes: prefixes, staged: staging ? try e.storage.stagedPull() : [])
        }
    }

    /// Applies one pull reply.
    ///
    /// - `more`: the page is staged (in the store file for a file store) with the round's
    ///   progress, and nothing visible changes; `outcomes` must be empty (they settle when the
    ///   round is applied).
    /// - otherwise the round's staged pages and this page are applied as one change, with the
    ///   outcomes, and `cursor` becomes the store's sync cursor.
    /// - `reset`: the cursor the request sent was refused (another database's, or too old).
    ///   A round staged before is dropped, and this page starts a round that, at its end,
    ///   replaces every confirmed record: records it does not bring are deleted (listeners
    ///   hear of it, cause `server`); pending mutations stay and are refolded on the result.
    package func syncApplyPull(changes: [Op], outcomes: [PullOutcome], cursor: String, more: Bool, reset: Bool) throws(OptimistError) {
        if more {
            try change(.server) { e in e.stagePullPage(changes, cursor: cursor, reset: reset) }
            return
        }
        let staged = try syncPullRound()
        if staged != nil || reset,
           try applyRoundInStorage(changes: changes, outcomes: outcomes, cursor: cursor, reset: reset) {
            return
        }
        let round = reset ? nil : staged
        var ops = changes
        if round != nil {
            // The staged pages are read back from where the storage keeps them: a store file's
            // writer must have written them first.
            try flush()
            ops = try read { e throws(OptimistError) in try e.storage.stagedPull() }
            ops.append(contentsOf: changes)
        }
        if reset || round?.reset == true {
            let deletes = try read { e throws(OptimistError) in try e.resetDeletes(keeping: ops) }
            ops.insert(contentsOf: deletes, at: 0)
        }
        do {
            try syncApplyPull(changes: ops, outcomes: outcomes, cursor: cursor)
        } catch .invalid(let why) {
            // A change that cannot apply ends the round: the next pull starts it again from the
            // store's cursor, rather than retrying the same staged pages for ever.
            try? change(.server) { e in e.endPullRound() }
            throw .invalid(why)
        }
    }

    /// The round's end in the storage itself, when it can (a store file) and nothing needs
    /// the round's records one by one (no listener, no view): the last page is staged with the
    /// others and the writer applies them all to the file a page at a time, in one
    /// transaction, so the round is never in memory whole (a million-record first pull ends in
    /// the memory one page takes). Readers that need the state lock wait for that transaction
    /// (gets the read cache answers do not: they see the state before it); then every record
    /// kept in memory is dropped, pending mutations are refolded on the new records, and the
    /// outcomes settle. Returns false, having done nothing, where it cannot.
    private func applyRoundInStorage(changes: [Op], outcomes: [PullOutcome], cursor: String,
                                     reset: Bool) throws(OptimistError) -> Bool {
        guard let sink else { return false }
        let done = try confirmedWriters.locked { () throws(OptimistError) -> (Delivery, OptimistError?, [RecordCache])? in
          try writers.locked { () throws(OptimistError) -> (Delivery, OptimistError?, [RecordCache])? in
            let blind = state { e in e.storage.appliesStagedRounds && !e.tracksChanges && e.views.isEmpty && e.layer == nil }
            guard blind else { return nil }
            // Every change before this one in the file, so that the round's transaction is the
            // writer's whole batch and nothing the storage holds unwritten is newer than it.
            if let error = sink.takeError() { throw error }
            try sink.flush()
            return try state { e throws(OptimistError) -> (Delivery, OptimistError?, [RecordCache]) in
                try openChange(e, .server)
                e.stagePullPage(changes, cursor: cursor, reset: reset)
                let round = e.pullRound!
                e.log(.pullRoundApplied(cursor: cursor, reset: round.reset))
                e.pullRound = nil
                e.storage.dropStagedPull()
                if cursor != e.syncCursor { e.syncCursor = cursor }
                handOffJournal(e)
                // Whatever the flush says, the file may have the round now (a failed write is
                // retried): nothing read before it may answer again.
                let flushed = Result { () throws(OptimistError) in try sink.flush() }
                e.storage.forgetConfirmed()
                let dropped = e.readCache?.invalidateAll() ?? []
                if case .failure(let error) = flushed { throw error }
                // Pending mutations on top of the new records.
                var overlaid = [RecordAddress]()
                for c in e.collections.values {
                    for key in c.chains.keys { overlaid.append(RecordAddress(collection: c.name, key: key)) }
                }
                try e.prefetch(overlaid)
                for a in overlaid { e.recompute(e.collection(a.collection), a.key) }
                try e.prefetchPullOutcomes(outcomes)
                e.applyPullOutcomes(outcomes, cursor: cursor)
                let fault = sealChange(e)
                handOffJournal(e)
                return (e.takeDelivery(), fault, dropped)
            }
          }
        }
        guard let (delivery, fault, dropped) = done else { return false }
        withExtendedLifetime(dropped) {}  // the read cache's old entries, freed outside the locks
        try deliver(delivery, fault: fault)
        return true
    }
}
