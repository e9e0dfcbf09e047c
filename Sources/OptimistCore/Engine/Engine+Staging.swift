import OptimistModel
// A server batch applied in stages, so that neither readers nor taps wait for it (see
// ``ConfirmedLayer`` and ``Store``'s locking): the batch's records are read a chunk per
// state-lock hold, built with no lock held, published in one short step under both writer
// locks and the state lock, then moved into the storage a chunk per state-lock hold.
//
// The batch's writer holds the confirmed writers' lock throughout, so nothing else changes
// the confirmed records, the collections' views or the listeners meanwhile: what it read of
// them stays true until the publish. Only taps (mutates) run between its steps; they change
// pending mutations and visible values, never a confirmed record. The keys they touch are
// noted (``Engine/stagingTouched``), and the publish settles those of the batch's keys
// again, with the state as it is then: so the batch publishes as if it had been made whole
// in that one step, after every tap before it and before every tap after it.

/// What a staged batch learnt at its plan, under the locks: everything its build reads of
/// the engine, so that the build reads none of the engine's changing state.
struct StagePlan {
    /// The batch's collections by name (made at the plan if new).
    var collections: [Key: CollectionState]
    /// Whether anyone hears of changes (listeners, live queries): the batch then notes each
    /// record's value before it, as any change does.
    var tracks: Bool
    /// The records to read before the build (empty for a blind batch: see ``Engine/planStage(_:names:)``).
    var reads: [RecordAddress]
}

/// What the reads of a staged batch found: each record's confirmed value, the records a
/// mutation overlaid then, and (when someone listens) the record's value and status before
/// the batch.
struct StageReads {
    var confirmed: [RecordAddress: Record?] = [:]
    var overlaid: Set<RecordAddress> = []
    var before: [RecordAddress: Engine.Before] = [:]
}

/// What a staged batch publishes, built with no lock held.
struct StagedBatch {
    /// Each touched record once, in first-touch order, with its new confirmed value.
    var results: [(CollectionState, Key, Record?)]
    var layer: ConfirmedLayer
    /// The batch's `confirmed` journal entries (nil for an in-memory store).
    var entries: [JournalEntry]?
    /// Per view, the changes of its confirmed and visible values, in record order: added at
    /// the publish one by one, as an unstaged batch adds them, so the sums come out the same.
    var viewDeltas: [(view: ViewState, confirmed: [Double], visible: [Double])]
    /// The batch's keys that a mutation overlaid when they were read: refolded on the new
    /// confirmed values at the publish (with those a tap overlaid since).
    var pendingKeys: [(CollectionState, Key)]
    var reads: StageReads

    /// The records to move into the storage, for it to prepare (see ``ConfirmedStorage/prepareMoves(_:)``).
    var moves: [RecordMove] { results.map { RecordMove(collection: $0.0.name, key: $0.1, value: $0.2) } }
}

/// A staged batch's records as its listeners hear of them, settled at its publish: the value
/// and status of each record a mutation overlays then (the others show the layer's value,
/// confirmed), and the listeners then.
struct StagedHearing {
    var overlaid: [RecordAddress: (value: Record?, status: RecordStatus)] = [:]
    var subscriptions: [Subscription] = []
    /// Changes the publish's own steps made (a pull's outcomes) on records outside the batch.
    var others: [Change] = []
    /// The batch's records whose mutation's status the publish changed (a pull's outcome):
    /// heard of even when their value and status stay the same, as any change reports them.
    var forced: Set<RecordAddress> = []
    /// The live queries' deltas, taken in the hold.
    var queries: Delivery = []
}

extension Engine {
    /// The distinct collections `ops` name, in first-use order (no engine state read: for a
    /// staged batch's plan, before it takes a lock).
    static func collectionNames(_ ops: [Op]) -> [Key] {
        var names = [Key]()
        var last: Key?
        for op in ops {
            // A batch names one collection for long runs of ops: a comparison with the last
            // one, not a hash per op.
            if op.collection == last { continue }
            last = op.collection
            if !names.contains(op.collection) { names.append(op.collection) }
        }
        return names
    }

    /// Step 1, under the locks: the batch's collections (made if new) and whether the batch is
    /// blind: a bulk load of puts and deletes that nobody watches, with no views and no pending
    /// mutation in its collections, reads nothing (see ``serverApply(_:)``). The reads' list is
    /// made after, with no lock (``stageReads(_:)``).
    func planStage(_ ops: [Op], names: [Key], onlyPutsAndDeletes: Bool) -> (plan: StagePlan, blind: Bool) {
        var collections = [Key: CollectionState]()
        stagingActive = true
        var blind = onlyPutsAndDeletes && !tracksChanges
        for name in names {
            let c = collection(name)
            c.staged = true
            collections[name] = c
            if !c.views.isEmpty || !c.overlay.isEmpty { blind = false }
        }
        return (StagePlan(collections: collections, tracks: tracksChanges, reads: []), blind)
    }

    /// The taps no longer note their keys (the batch published, or failed before).
    func endStaging() {
        for c in collections.values where c.staged { c.staged = false }
        stagingTouched = []
    }

    /// Each record `ops` touch, once, in first-touch order.
    static func stageReads(_ ops: [Op]) -> [RecordAddress] {
        var seen = Set<RecordAddress>(minimumCapacity: ops.count)
        var reads = [RecordAddress]()
        for op in ops {
            let a = RecordAddress(collection: op.collection, key: op.key)
            if seen.insert(a).inserted { reads.append(a) }
        }
        return reads
    }

    /// Step 2, under the state lock, a chunk at a time: the confirmed records before the
    /// batch (read around the cache: the batch would only churn it), which of them a mutation
    /// overlays, and what listeners must hear they were.
    func readStage(_ chunk: ArraySlice<RecordAddress>, _ plan: StagePlan, into found: inout StageReads) throws(OptimistError) {
        var byCollection = [Key: [Key]]()
        for a in chunk { byCollection[a.collection, default: []].append(a.key) }
        for (name, keys) in byCollection {
            let present = try storage.uncachedRecords(name, keys)
            for k in keys { found.confirmed[RecordAddress(collection: name, key: k)] = present[k] }
        }
        for a in chunk {
            let c = plan.collections[a.collection]!
            let overlay = c.overlay.index(forKey: a.key)
            if overlay != nil || c.chains[a.key] != nil { found.overlaid.insert(a) }
            guard plan.tracks else { continue }
            let value = overlay.map { c.overlay.values[$0] } ?? (found.confirmed[a] ?? nil)
            found.before[a] = Before(value: value, status: recordStatus(c, a.key), cause: .server, forced: false)
        }
    }

    /// Step 3, with no lock: the batch's new records, all or nothing (`.invalid` when an op
    /// cannot apply; nothing has changed then), and everything the publish needs. Reads
    /// nothing of the engine that a tap changes: the plan's collections, their views (only
    /// a confirmed change defines one), and what the reads found.
    static func buildStage(_ ops: [Op], _ plan: StagePlan, read: StageReads, journaling: Bool) throws(OptimistError) -> StagedBatch {
        let results = try evaluate(ops, in: { plan.collections[$0]! },
                                   on: { (c, k) in read.confirmed[RecordAddress(collection: c.name, key: k)] ?? nil },
                                   skipFailing: false)
        var entries: [JournalEntry]?
        if journaling {
            entries = results.map { (c, key, value) in .confirmed(collection: c.name, key: key, value: value) }
        }
        var deltas = [ObjectIdentifier: (view: ViewState, confirmed: [Double], visible: [Double])]()
        var order = [ObjectIdentifier]()
        var pending = [(CollectionState, Key)]()
        for (c, key, new) in results {
            let a = RecordAddress(collection: c.name, key: key)
            let shown = !read.overlaid.contains(a)
            if !shown { pending.append((c, key)) }
            guard !c.views.isEmpty else { continue }
            let old = read.confirmed[a] ?? nil
            for v in c.views where key.hasBytePrefix(v.prefix) {
                let d = v.contribution(new) - v.contribution(old)
                guard d != 0 else { continue }
                let id = ObjectIdentifier(v)
                if deltas[id] == nil {
                    deltas[id] = (v, [], [])
                    order.append(id)
                }
                deltas[id]!.confirmed.append(d)
                if shown { deltas[id]!.visible.append(d) }
            }
        }
        return StagedBatch(results: results, layer: ConfirmedLayer(results), entries: entries,
                           viewDeltas: order.map { deltas[$0]! }, pendingKeys: pending, reads: read)
    }

    /// Step 4, under the state lock: the batch becomes visible, whole. Costs the taps made
    /// since the plan, the number of views' changes and the pending keys it touches, not the
    /// batch's size. Returns the batch's keys a mutation overlays now (refolded here).
    func publishStage(_ s: inout StagedBatch) throws(OptimistError) -> [RecordAddress] {
        // The batch's keys a tap touched since the plan: settled again with the state now.
        let touched = stagingTouched
        endStaging()
        // Only taps run between a staged batch's steps, and a tap leaves its key overlaid:
        // a key of the batch shown when read and touched since is overlaid now. Refolded
        // below, which puts its visible value (and the views' counts of it) right; the build
        // counted its change as shown, which it no longer is.
        var overtaken = [(CollectionState, RecordAddress, new: Record?)]()
        for a in touched {
            guard let new = s.layer.value(a.collection, a.key), let c = collections[a.collection] else { continue }
            // What the listeners and live queries heard of last is the tap's: the batch's
            // changes are told against it (a live query finds a row from its value before).
            if s.reads.before[a] != nil {
                s.reads.before[a] = Before(value: try readVisible(c, a.key), status: recordStatus(c, a.key), cause: .server, forced: false)
            }
            guard !s.reads.overlaid.contains(a) else { continue }
            s.reads.overlaid.insert(a)
            overtaken.append((c, a, new))
        }
        // Nothing can fail from here on.
        for (c, a, new) in overtaken {
            s.pendingKeys.append((c, a.key))
            guard !c.views.isEmpty else { continue }
            let old = s.reads.confirmed[a] ?? nil
            for v in c.views where a.key.hasBytePrefix(v.prefix) {
                let d = v.contribution(new) - v.contribution(old)
                guard d != 0 else { continue }
                v.value -= d
                noteViewsTouched(c)
            }
        }
        layer = s.layer
        for (v, confirmed, visible) in s.viewDeltas {
            for d in confirmed { v.confirmedValue += d }
            if !confirmed.isEmpty { noteViewChanged(v) }
            for d in visible { v.value += d }
            if !visible.isEmpty, let c = collections[v.collection] { noteViewsTouched(c) }
        }
        var overlaid = [RecordAddress]()
        for (c, key) in s.pendingKeys {
            recompute(c, key)
            if c.overlay.index(forKey: key) != nil || c.chains[key] != nil {
                overlaid.append(RecordAddress(collection: c.name, key: key))
            }
        }
        return overlaid
    }

    /// Still in the publish's hold: what the batch's listeners need that only the lock may
    /// read (the overlaid records' values and statuses, the listeners, the changes the
    /// publish's other steps made), and, for the live queries over the batch's collections,
    /// each changed record followed now (their rows are read under the state lock).
    func stagedHearing(_ s: StagedBatch, _ plan: StagePlan, overlaid: [RecordAddress]) -> StagedHearing {
        var h = StagedHearing()
        for a in overlaid {
            let c = collections[a.collection]!
            h.overlaid[a] = (visible(c, a.key), recordStatus(c, a.key))
        }
        // The publish's own steps (a pull's outcomes) noted their records as any change
        // does: those the batch also has are heard of once, with the batch's.
        for a in touchOrder {
            guard let old = before[a] else { continue }
            let c = collections[a.collection]!
            if s.layer.value(a.collection, a.key) != nil {
                if h.overlaid[a] == nil { h.overlaid[a] = (visible(c, a.key), recordStatus(c, a.key)) }
                if old.forced { h.forced.insert(a) }
                continue
            }
            let value = visible(c, a.key), status = recordStatus(c, a.key)
            let valueChanged = value != old.value
            let differs = valueChanged || status != old.status
            if old.forced || differs {
                h.others.append(Change(collection: a.collection, key: a.key, value: value, status: status, cause: old.cause))
            }
            if differs && !c.queries.isEmpty {
                follow(c, a.key, value: value, status: status, old: old, valueChanged: valueChanged)
            }
        }
        forgetTouches()
        h.subscriptions = subscriptions.sorted(by: { $0.key < $1.key }).map(\.value)
        if plan.collections.values.contains(where: { !$0.queries.isEmpty }) {
            // O(batch) in the hold: a live query's rows change under the state lock only.
            for (c, key, _) in s.results where !c.queries.isEmpty {
                let a = RecordAddress(collection: c.name, key: key)
                guard let old = s.reads.before[a] else { continue }
                let (value, status) = h.overlaid[a] ?? (s.layer.value(c.name, key) ?? nil, .confirmed)
                let valueChanged = value != old.value
                if valueChanged || status != old.status {
                    follow(c, key, value: value, status: status, old: old, valueChanged: valueChanged)
                }
            }
        }
        if !queriesTouched.isEmpty { takeQueryDeltas(into: &h.queries) }
        return h
    }

    /// After the publish, with no lock: the listeners' calls for the batch's records (each
    /// whose value or status changed, in the batch's order) and the publish's other changes.
    static func stagedDelivery(_ s: StagedBatch, _ h: StagedHearing) -> Delivery {
        guard !h.subscriptions.isEmpty else { return h.queries }
        var changes = [Change]()
        for (c, key, _) in s.results {
            let a = RecordAddress(collection: c.name, key: key)
            guard let old = s.reads.before[a] else { continue }
            let (value, status) = h.overlaid[a] ?? (s.layer.value(c.name, key) ?? nil, .confirmed)
            if old.forced || value != old.value || status != old.status || h.forced.contains(a) {
                changes.append(Change(collection: c.name, key: key, value: value, status: status, cause: old.cause))
            }
        }
        changes.append(contentsOf: h.others)
        var delivery = Delivery()
        if !changes.isEmpty {
            for s in h.subscriptions {
                let mine = changes.filter(s.wants)
                if !mine.isEmpty { delivery.append((s.listener, mine)) }
            }
        }
        delivery.append(contentsOf: h.queries)
        return delivery
    }

    /// Step 5, under the state lock, a chunk at a time: records into the storage. The layer
    /// still answers for them, so readers see no difference.
    /// Moves `chunk` of a staged batch's results into the storage, through the moves it
    /// prepared (indexed as the results are) when it did.
    func foldStage(_ chunk: ArraySlice<(CollectionState, Key, Record?)>, moves: (any StagedMoves)?) {
        if let moves {
            for i in chunk.indices { moves.move(i) }
        } else {
            for (c, key, value) in chunk { storage.setRecord(c.name, key, value) }
        }
    }
}
