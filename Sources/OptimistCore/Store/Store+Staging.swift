import OptimistModel
import OptimistThreads
import Synchronization

extension Store {
    /// Server changes of this many records or more are staged (see ``Store``'s locking):
    /// below it, building a layer costs more than the whole change under the state lock.
    package static let defaultStagingThreshold = 1024

    /// Records read, or moved into the storage, per state-lock hold of a staged change: a
    /// hold of well under a millisecond, so a reader waits at most that.
    static let stagingChunk = 256

    /// A server change (a bulk server apply, or a pull's changes with its outcomes and
    /// cursor) made in stages; see ``Store``'s locking and ``ConfirmedLayer``. All or
    /// nothing as an ordinary change is: a failed read or an op that cannot apply throws
    /// before anything is published.
    func changeStaged(_ ops: [Op], outcomes: [PullOutcome], cursor: String?) throws(OptimistError) {
        let (delivery, fault) = try confirmedWriters.lockedYielding { () throws(OptimistError) -> (Delivery, OptimistError?) in
            try staged(ops, outcomes: outcomes, cursor: cursor)
        }
        try deliver(delivery, fault: fault)
    }

    /// What the read cache answers with while the batch's layer is published: the layer's
    /// value of a record that no mutation overlaid at the publish (nil for any other record;
    /// a tap that overlays one later drops it from the answers, see ``ReadCache``).
    private static func layerAnswer(_ layer: ConfirmedLayer, overlaid: [RecordAddress]) -> (RecordAddress) -> Record?? {
        guard !overlaid.isEmpty else { return { layer.value($0.collection, $0.key) } }
        let overlaid = Set(overlaid)
        return { overlaid.contains($0) ? nil : layer.value($0.collection, $0.key) }
    }

    /// ``changeStaged(_:outcomes:cursor:)`` under the confirmed writers' lock. Taps take the
    /// writers' lock between its steps (see ``Store``'s locking and `Engine+Staging.swift`).
    private func staged(_ ops: [Op], outcomes: [PullOutcome], cursor: String?)
        throws(OptimistError) -> (Delivery, OptimistError?) {
        // 1. Plan: checks as any change makes, the collections made, whether to read. Only
        // `close()` replaces the engine, under the confirmed writers' lock, held here.
        let e = unlockedEngine
        let names = Engine.collectionNames(ops)
        let onlyPutsAndDeletes = ops.allSatisfy(\.replacesRecord)
        var (plan, blind) = try writers.lockedYielding { () throws(OptimistError) -> (StagePlan, Bool) in
            try state { e throws(OptimistError) in
                try openChange(e, .server)
                return e.planStage(ops, names: names, onlyPutsAndDeletes: onlyPutsAndDeletes)
            }
        }
        do throws(OptimistError) {
            if !blind { plan.reads = Engine.stageReads(ops) }
            // 2. Reads, a chunk per hold of the state lock.
            var found = StageReads()
            found.confirmed.reserveCapacity(plan.reads.count)
            var start = 0
            while start < plan.reads.count {
                let end = min(plan.reads.count, start + Self.stagingChunk)
                try state { e throws(OptimistError) in try e.readStage(plan.reads[start..<end], plan, into: &found) }
                start = end
                letWaitingThreadsRun()  // a reader waiting for this CPU runs now (see there)
            }
            // 3. Build, with no lock held.
            var staged = try Engine.buildStage(ops, plan, read: found, journaling: sink != nil)
            // 4. Publish: the whole batch at once (and a pull's outcomes and cursor with it),
            // and its journal handed over in the same hold of the writers' lock, so the file
            // has it before any tap made after it.
            let (fault, hearing) = try writing { e throws(OptimistError) -> (OptimistError?, StagedHearing) in
                let r = try publishing { () throws(OptimistError) -> (OptimistError?, StagedHearing) in
                    try openChange(e, .server)
                    try e.prefetchPullOutcomes(outcomes)
                    let overlaid = try e.publishStage(&staged)
                    if !outcomes.isEmpty || cursor != nil { e.applyPullOutcomes(outcomes, cursor: cursor) }
                    // Every visible value the batch changed, at once: dropping its records'
                    // entries one by one would cost the batch's size here. Last in the hold, so
                    // what the entries still say is stale only where the layer has the record;
                    // until they are put back (below), they answer, with the layer's values
                    // where it has one.
                    e.readCache?.setAside { [layer = staged.layer] in layer.value($0.collection, $0.key) }
                    e.readCache?.answer(from: Self.layerAnswer(staged.layer, overlaid: overlaid))
                    let fault = sealChange(e)
                    return (fault, e.stagedHearing(staged, plan, overlaid: overlaid))
                }
                if sink != nil {
                    handOffJournal(e, staged: staged.entries ?? [])
                    e.storage.holdAppendForMoves()
                }
                return r
            }
            // The read cache's entries come back, those of the batch's records with their
            // new values (see ``ReadCache/refill()``).
            e.readCache?.refill()
            afterStagedPublish?()
            // The listeners' calls, from what the publish settled and the layer, with no lock.
            let delivery = Engine.stagedDelivery(staged, hearing)
            // 5. Into the storage, a chunk per hold; then the layer goes. The moves are
            // prepared first, outside the lock (room, and an in-memory store's bytes: see
            // ``ConfirmedStorage/prepareMoves(_:)``), with upkeep held from before.
            state { e in e.storage.holdsUpkeep = true }
            let moves = e.storage.prepareMoves(staged.moves)
            if let moves {
                let replaced = state { _ in moves.installRoom() }
                withExtendedLifetime(replaced) {}  // freed here, outside the lock
            }
            start = 0
            while start < staged.results.count {
                let end = min(staged.results.count, start + Self.stagingChunk)
                state { e in e.foldStage(staged.results[start..<end], moves: moves) }
                start = end
                letWaitingThreadsRun()
            }
            // The upkeep the moves made due (an in-memory store's compaction, O(records)),
            // built outside the lock and put in place in one step.
            let upkeep = e.storage.prepareUpkeep()
            let replaced = writers.lockedYielding { state { e -> (ConfirmedLayer?, Any?) in
                e.stagingActive = false
                e.storage.holdsUpkeep = false
                e.storage.releaseAppendForMoves()
                let layer = e.layer
                e.layer = nil
                e.readCache?.stopAnswering()
                return (layer, upkeep?.install())
            } }
            // The layer and what the upkeep replaced are freed here, outside the lock (a
            // 100k-record layer's release takes milliseconds).
            withExtendedLifetime(replaced) {}
            withExtendedLifetime(staged) {}
            return (delivery, fault)
        } catch {
            // Nothing was published: the taps' keys are no longer noted.
            try? writers.locked { () throws(OptimistError) in
                state { e in
                    e.storageFault = nil
                    e.endStaging()
                    e.stagingActive = false
                }
            }
            throw error
        }
    }
}
