/// What a persistence layer loads to reopen a store: everything but the confirmed records,
/// which stay in the storage (a store file reads them on demand), so loading costs
/// O(pending mutations), not O(records).
public struct StoreSnapshot: Sendable {
    public var clientID: String
    /// The next mutation id to hand out (never below any id ever handed out).
    public var nextID: MutationID
    /// Confirmed records to put into the storage before the mutations are folded (for a
    /// store restored into memory; a store file leaves this empty).
    public var confirmed: [(collection: Key, key: Key, value: Record)]
    /// Live mutations, in id order.
    public var mutations: [MutationRecord]
    /// How ended mutations ended.
    public var ended: [(id: MutationID, status: MutationStatus)]
    public var loaded: [(collection: Key, range: LoadedRange)]
    /// The sync's pull cursor, nil before the first pull.
    public var syncCursor: String?
    /// The views, with their values over the confirmed records.
    public var views: [ViewDefinition] = []

    public init(clientID: String, nextID: MutationID = 1,
                confirmed: [(collection: Key, key: Key, value: Record)] = [],
                mutations: [MutationRecord] = [], ended: [(id: MutationID, status: MutationStatus)] = [],
                loaded: [(collection: Key, range: LoadedRange)] = [], syncCursor: String? = nil) {
        self.clientID = clientID
        self.nextID = nextID
        self.confirmed = confirmed
        self.mutations = mutations
        self.ended = ended
        self.loaded = loaded
        self.syncCursor = syncCursor
    }
}

extension Engine {
    /// Rebuilds `V = fold(P, C)` from a snapshot: views come back with their confirmed values,
    /// and each live mutation is folded onto the keys it touches (reading their confirmed
    /// records), so the work is O(pending). Inflight mutations come back pending: the process
    /// that sent them is gone, so they are sent again (same client and mutation id, so the
    /// server can drop the duplicate).
    ///
    /// - Throws: what the storage throws reading a record (`.io`, `.corrupt`).
    convenience init(restoring s: consuming StoreSnapshot, journaling: Bool, storage: any ConfirmedStorage) throws(OptimistError) {
        self.init(clientID: s.clientID, journaling: journaling, storage: storage)
        for (coll, key, value) in s.confirmed { storage.setRecord(coll, key, value) }
        for d in s.views {
            let v = ViewState(name: d.name, collection: d.collection, prefix: d.prefix, kind: d.kind)
            v.confirmedValue = d.confirmedValue
            v.value = d.confirmedValue  // the folds below add the overlay's changes
            collection(d.collection).views.append(v)
            views[Key(d.name)] = v
        }
        // The records are moved out of the snapshot, not copied (a copy retains its ops and
        // strings, released again with the snapshot). They are read in place below (by index,
        // not `for r in`, which copies each record: ~5 retains and releases apiece).
        var records = [MutationRecord]()
        swap(&records, &s.mutations)
        var maxID: MutationID = 0
        live.reserveCapacity(records.count)
        due.reserveCapacity(records.count)
        let touched = Self.touchedKeys(records)
        reserveOverlay(for: touched)
        let confirmed = try confirmedRecords(of: touched)
        // Folded in id order (loaders hand them over in it; sorted only when one did not),
        // taken from the end of the array so that each is moved out.
        if records.indices.dropFirst().allSatisfy({ records[$0 - 1].id < records[$0].id }) {
            records.withUnsafeMutableBufferPointer { $0.reverse() }  // moves (Array's own reverse copies)
        } else {
            records.sort(by: { $0.id > $1.id })
        }
        // Most mutations touch the collection the one before touched: its state is kept at hand.
        var last: (state: CollectionState, confirmed: [Key: Record])?
        while var r = records.popLast() {
            maxID = max(maxID, r.id)
            if r.status == .inflight { r.status = .pending }
            guard !r.status.isEnded else { continue }
            let m = LiveMutation(record: consume r)
            live[MutationKey(m.record.id)] = m
            // Old values first (the overlay's, or the confirmed record: only the records pending
            // mutations touch are read, O(pending)), then the chain grows.
            if m.record.ops.count == 1 {
                // Most mutations have one op: no arrays of results and old values.
                let op = m.record.ops[0]
                if last == nil || last!.state.name != op.collection {
                    last = (collection(op.collection), confirmed[op.collection] ?? [:])
                }
                fold(op, of: m.record.id, into: last!.state, confirmed: last!.confirmed)
            } else {
                let results = try evaluate(m.record.ops, on: { (c, k) throws(OptimistError) in try readVisible(c, k) }, skipFailing: true)
                var olds = [Record?]()
                olds.reserveCapacity(results.count)
                for (c, key, _) in results { olds.append(visible(c, key)) }
                for a in m.touched {
                    collection(a.collection).chains[a.key, default: PendingChain()].append(m.record.id)
                }
                for (i, (c, key, value)) in results.enumerated() { setVisible(c, key, value, old: olds[i], mergingIndex: false) }
            }
            if m.record.status == .pending { due.append(DueEntry(id: m.record.id, queuePosition: m.record.queuePosition)) }
            if let k = m.record.dedupeKey { dedupe[k] = m.record.id }
        }
        // The key indexes were filled without their step-by-step merges: one merge each that
        // needs one (a smaller buffer waits for the next scan, as after any insert).
        for c in collections.values where c.index.needsMerge {
            c.index.prepare(contains: { c.overlay[$0] != nil })
        }
        for (id, status) in s.ended {
            maxID = max(maxID, id)
            ended.insert(id, status)
        }
        for (coll, range) in s.loaded { freshness[coll, default: Freshness()].mark(range) }
        // Retried mutations sit after the others; the loader's id order is not send order.
        if due.count > 1 && !zip(due, due.dropFirst()).allSatisfy({ $0.0 < $0.1 }) { due.sort() }
        syncCursor = s.syncCursor
        nextID = max(s.nextID, maxID + 1)
        storage.endCall()
    }

    /// `op`, the only op of mutation `id`, folded onto its key: ``setVisible(_:_:_:old:mergingIndex:)``
    /// for a key whose chain was just extended, with its overlay entry found once.
    /// `confirmed`: the collection's records read in bulk (not cached: from here on the overlay
    /// holds the key's value).
    private func fold(_ op: Op, of id: MutationID, into c: CollectionState, confirmed: [Key: Record]) {
        let key = op.key
        let found = c.overlay.index(forKey: key)
        let old: Record?
        if let i = found { old = c.overlay.values[i] } else { old = confirmed[key] }
        let value: Record?
        switch op.apply(to: old) {
        case .success(let n): value = n
        case .failure: value = old  // the re-application rule: an op that no longer applies is skipped
        }
        c.chains[key, default: PendingChain()].append(id)
        for v in c.views { v.update(key: key, old: old, new: value) }
        if let i = found {
            c.overlay.values[i] = value
        } else {
            c.overlay.updateValue(value, forKey: key)
            c.index.insert(key)  // merged once, after the fold
        }
    }

    /// What the live mutations touch, by collection: how many ops (to size the collection's
    /// dictionaries) and the keys of the one-op mutations (whose confirmed records are read in
    /// bulk; the others read theirs as they fold).
    private static func touchedKeys(_ mutations: [MutationRecord]) -> [Key: (ops: Int, singles: [Key])] {
        var out: [Key: (ops: Int, singles: [Key])] = [:]
        // Runs of mutations on one collection are counted before they are added in.
        var run: (collection: Key, ops: Int, singles: [Key])?
        for i in mutations.indices where !mutations[i].status.isEnded {
            let n = mutations[i].ops.count
            for j in 0..<n {
                let collection = mutations[i].ops[j].collection
                if run == nil || run!.collection != collection {
                    if let r = run { out[r.collection, default: (0, [])].ops += r.ops; out[r.collection]!.singles += r.singles }
                    run = (collection, 0, [])
                }
                run!.ops += 1
                if n == 1 { run!.singles.append(mutations[i].ops[0].key) }
            }
        }
        if let r = run { out[r.collection, default: (0, [])].ops += r.ops; out[r.collection]!.singles += r.singles }
        return out
    }

    /// The confirmed records of the keys that one-op mutations touch, by collection, read in
    /// bulk and without filling the cache.
    private func confirmedRecords(of touched: [Key: (ops: Int, singles: [Key])]) throws(OptimistError) -> [Key: [Key: Record]] {
        var out: [Key: [Key: Record]] = [:]
        for (collection, t) in touched where !t.singles.isEmpty {
            out[collection] = try storage.uncachedRecords(collection, t.singles)
        }
        return out
    }

    /// Sizes each collection's chains and overlay for the ops about to be folded (an upper
    /// bound: ops on one key count once each), so 100k restored keys are not rehashed ~17
    /// times as the dictionaries double.
    private func reserveOverlay(for touched: [Key: (ops: Int, singles: [Key])]) {
        for (name, t) in touched where t.ops > 64 {
            let c = collection(name)
            c.chains.reserveCapacity(c.chains.count + t.ops)
            c.overlay.reserveCapacity(c.overlay.count + t.ops)
        }
    }
}
