import OptimistModel
// A server batch applied in stages, so that readers never wait for it (see ``ConfirmedLayer``
// and ``Store``'s locking): the batch's records are read and built while only the writers'
// lock is held, published in one short step under the state lock, then moved into the
// storage a chunk per state-lock hold. The writers' lock is held throughout, so nothing else
// changes the engine in between: what was read stays true until the publish.

/// What a staged batch publishes, built outside the state lock.
struct StagedBatch {
    /// Each touched record once, in first-touch order, with its new confirmed value.
    var results: [(CollectionState, Key, Record?)]
    var layer: ConfirmedLayer
    /// The batch's `confirmed` journal entries (nil for an in-memory store).
    var entries: [JournalEntry]?
    /// Per view, the changes of its confirmed and visible values, in record order: added at
    /// the publish one by one, as an unstaged batch adds them, so the sums come out the same.
    var viewDeltas: [(view: ViewState, confirmed: [Double], visible: [Double])]
    /// The batch's keys with pending mutations on them: refolded on the new confirmed values
    /// at the publish.
    var pendingKeys: [(CollectionState, Key)]

    /// The records to move into the storage, for it to prepare (see ``ConfirmedStorage/prepareMoves(_:)``).
    var moves: [RecordMove] { results.map { RecordMove(collection: $0.0.name, key: $0.1, value: $0.2) } }
}

extension Engine {
    /// Step 1a, outside the state lock: the collections the batch names that do not exist
    /// yet (readers look collections up, so they are made under the lock, in step 1b).
    func missingCollections(_ ops: [Op]) -> [Key] {
        var names = Set<Key>()
        var missing = [Key]()
        var last: Key?
        for op in ops {
            // A batch names one collection for long runs of ops: a comparison with the last
            // one, not a hash and a set insert per op.
            if op.collection == last { continue }
            last = op.collection
            if names.insert(op.collection).inserted && collections[op.collection] == nil { missing.append(op.collection) }
        }
        return missing
    }

    /// Step 1c, outside the state lock: the records the batch must read first: none for a
    /// bulk load of puts and deletes that nobody watches (see ``serverApply(_:)``), else each
    /// touched record once.
    func planStage(_ ops: [Op]) -> [RecordAddress] {
        var blind = !tracksChanges
        var last: Key?
        for op in ops where blind {
            switch op {
            case .put, .delete:
                if op.collection == last { continue }
                last = op.collection
                let c = collections[op.collection]!
                if !c.views.isEmpty || !c.overlay.isEmpty { blind = false }
            default: blind = false
            }
        }
        guard !blind else { return [] }
        var seen = Set<RecordAddress>(minimumCapacity: ops.count)
        var reads = [RecordAddress]()
        for op in ops {
            let a = RecordAddress(collection: op.collection, key: op.key)
            if seen.insert(a).inserted { reads.append(a) }
        }
        return reads
    }

    /// Step 2, under the state lock, a chunk at a time: the confirmed records before the
    /// batch (read around the cache: the batch would only churn it), and what listeners must
    /// hear they were.
    func readStage(_ chunk: ArraySlice<RecordAddress>, into found: inout [RecordAddress: Record?]) throws(OptimistError) {
        var byCollection = [Key: [Key]]()
        for a in chunk { byCollection[a.collection, default: []].append(a.key) }
        for (name, keys) in byCollection {
            let present = try storage.uncachedRecords(name, keys)
            for k in keys { found[RecordAddress(collection: name, key: k)] = present[k] }
        }
        for a in chunk { noteTouch(collections[a.collection]!, a.key, confirmed: found[a] ?? nil) }
    }

    /// Step 3, outside the state lock: the batch's new records, all or nothing (`.invalid`
    /// when an op cannot apply; nothing has changed then), and everything the publish needs.
    func buildStage(_ ops: [Op], read: [RecordAddress: Record?]) throws(OptimistError) -> StagedBatch {
        let results = try evaluate(ops, on: { (c, k) in read[RecordAddress(collection: c.name, key: k)] ?? nil },
                                   skipFailing: false)
        var entries: [JournalEntry]?
        if journal != nil {
            entries = results.map { (c, key, value) in .confirmed(collection: c.name, key: key, value: value) }
        }
        var deltas = [ObjectIdentifier: (view: ViewState, confirmed: [Double], visible: [Double])]()
        var order = [ObjectIdentifier]()
        var pending = [(CollectionState, Key)]()
        for (c, key, new) in results {
            let shown = c.overlay.index(forKey: key) == nil
            if !shown { pending.append((c, key)) }
            guard !c.views.isEmpty else { continue }
            let old = read[RecordAddress(collection: c.name, key: key)] ?? nil
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
                           viewDeltas: order.map { deltas[$0]! }, pendingKeys: pending)
    }

    /// Step 4, under the state lock: the batch becomes visible, whole. Costs the number of
    /// views' changes and of pending keys it touches, not the batch's size.
    func publishStage(_ s: StagedBatch) {
        layer = s.layer
        for (v, confirmed, visible) in s.viewDeltas {
            for d in confirmed { v.confirmedValue += d }
            if !confirmed.isEmpty { noteViewChanged(v) }
            for d in visible { v.value += d }
            if !visible.isEmpty, let c = collections[v.collection] { noteViewsTouched(c) }
        }
        for (c, key) in s.pendingKeys { recompute(c, key) }
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
