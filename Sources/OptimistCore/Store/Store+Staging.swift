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
        let (delivery, fault) = try writers.locked { () throws(OptimistError) -> (Delivery, OptimistError?) in
            try stagedLocked(ops, outcomes: outcomes, cursor: cursor)
        }
        try deliver(delivery, fault: fault)
    }

    /// The visible value of a record in the batch's layer that no mutation overlays (nil for
    /// any other record): what the read cache answers with while the layer is published.
    private static func layerAnswer(_ staged: StagedBatch) -> (RecordAddress) -> Record?? {
        let layer = staged.layer
        guard !staged.pendingKeys.isEmpty else { return { layer.value($0.collection, $0.key) } }
        let overlaid = Set(staged.pendingKeys.map { RecordAddress(collection: $0.0.name, key: $0.1) })
        return { overlaid.contains($0) ? nil : layer.value($0.collection, $0.key) }
    }

    /// ``changeStaged(_:outcomes:cursor:)`` under the writers' lock.
    private func stagedLocked(_ ops: [Op], outcomes: [PullOutcome], cursor: String?)
        throws(OptimistError) -> (Delivery, OptimistError?) {
        // 1. Plan: checks as any change makes, the collections made, the records to read.
        let e = unlockedEngine
        let missing = e.missingCollections(ops)
        try state { e throws(OptimistError) in
            try openChange(e, .server)
            for name in missing { _ = e.collection(name) }
        }
        let reads = e.planStage(ops)
        do throws(OptimistError) {
            // 2. Reads, a chunk per hold.
            var found = [RecordAddress: Record?](minimumCapacity: reads.count)
            var start = 0
            while start < reads.count {
                let end = min(reads.count, start + Self.stagingChunk)
                try state { e throws(OptimistError) in try e.readStage(reads[start..<end], into: &found) }
                start = end
                letWaitingThreadsRun()  // a reader waiting for this CPU runs now (see there)
            }
            // 3. Build, with no state lock held.
            let staged = try e.buildStage(ops, read: found)
            // What the layer answers gets with, lock-free, once published: the batch's
            // records that no mutation overlays (see ``ReadCache/answer(from:)``). Built here:
            // the overlaid keys are known now and cannot grow while this writer holds the
            // writers' lock (a pull's outcomes at the publish only end mutations).
            let visible = Self.layerAnswer(staged)
            // 4. Publish: the whole batch at once (and a pull's outcomes and cursor with it).
            let inner = try state { e throws(OptimistError) -> (Delivery?, OptimistError?) in
                try e.prefetchPullOutcomes(outcomes)
                e.publishStage(staged)
                if !outcomes.isEmpty || cursor != nil { e.applyPullOutcomes(outcomes, cursor: cursor) }
                // Every visible value the batch changed, at once: dropping its records' entries
                // one by one would cost the batch's size here. Last in the hold, so what the
                // entries still say is stale only where the layer has the record; until they
                // are put back (below), they answer, with the layer's values where it has one.
                e.readCache?.setAside { [layer = staged.layer] in layer.value($0.collection, $0.key) }
                e.readCache?.answer(from: visible)
                let fault = sealChange(e)
                // Outcomes touch records outside the layer, which only the lock may read.
                return (outcomes.isEmpty ? nil : e.takeDelivery(), fault)
            }
            // The read cache's entries come back, those of the batch's records with their
            // new values (see ``ReadCache/refill()``).
            e.readCache?.refill()
            afterStagedPublish?()
            // Every record the batch touched is in the layer or has an overlay: the
            // listeners' values are read from those, outside the lock.
            let delivery = inner.0 ?? e.takeDelivery()
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
            let replaced = state { e -> (ConfirmedLayer?, Any?) in
                e.storage.holdsUpkeep = false
                let layer = e.layer
                e.layer = nil
                e.readCache?.stopAnswering()
                return (layer, upkeep?.install())
            }
            // The layer and what the upkeep replaced are freed here, outside the lock (a
            // 100k-record layer's release takes milliseconds).
            withExtendedLifetime(replaced) {}
            // 6. The journal, in the order an unstaged change writes it.
            handOffJournal(e, staged: staged.entries ?? [])
            withExtendedLifetime(staged) {}
            return (delivery, inner.1)
        } catch {
            // Nothing was published: forget what the reads noted for listeners.
            state { e in
                e.storageFault = nil
                e.forgetTouches()
                _ = e.takeJournal()
            }
            throw error
        }
    }
}
