import OptimistModel
/// What a persistence layer loads to reopen a store: everything but the confirmed records,
/// which stay in the storage (a store file reads them on demand), so loading costs
/// O(pending mutations), not O(records).
package struct StoreSnapshot: Sendable {
    package var clientID: String
    /// The next mutation id to hand out (never below any id ever handed out).
    package var nextID: MutationID
    /// Confirmed records to put into the storage before the mutations are folded (for a
    /// store restored into memory; a store file leaves this empty).
    package var confirmed: [ConfirmedRecord]
    /// Live mutations, in id order.
    package var mutations: [MutationRecord]
    /// How ended mutations ended.
    package var ended: [EndedMutation]
    package var loaded: [LoadedCollectionRange]
    /// The sync's pull cursor, nil before the first pull.
    package var syncCursor: String?
    /// A pull round staged when the store was last open (see ``PullRound``), whose changes the
    /// storage holds; nil when none.
    package var pullRound: PullRound?
    /// The views, with their values over the confirmed records.
    package var views: [ViewDefinition] = []
    /// Live mutations still to be read, after ``mutations`` (a store file's, read as the
    /// store folds them).
    package var stream: (any MutationStream)?

    package init(clientID: String, nextID: MutationID = 1,
                confirmed: [ConfirmedRecord] = [],
                mutations: [MutationRecord] = [], ended: [EndedMutation] = [],
                loaded: [LoadedCollectionRange] = [], syncCursor: String? = nil) {
        self.clientID = clientID
        self.nextID = nextID
        self.confirmed = confirmed
        self.mutations = mutations
        self.ended = ended
        self.loaded = loaded
        self.syncCursor = syncCursor
    }
}

/// A confirmed record of a ``StoreSnapshot``: its collection, key and value.
package struct ConfirmedRecord: Sendable {
    package var collection: Key
    package var key: Key
    package var value: Record

    package init(collection: Key, key: Key, value: Record) {
        self.collection = collection
        self.key = key
        self.value = value
    }
}

/// A loaded range of a ``StoreSnapshot``: the collection and the range of its keys the sync has loaded.
package struct LoadedCollectionRange: Sendable {
    package var collection: Key
    package var range: LoadedRange

    package init(collection: Key, range: LoadedRange) {
        self.collection = collection
        self.range = range
    }
}

extension Engine {
    /// Rebuilds `V = fold(P, C)` from a snapshot: views come back with their confirmed values,
    /// and each live mutation is folded onto the keys it touches (reading their confirmed
    /// records), so the work is O(pending). Inflight mutations come back pending: the process
    /// that sent them is gone, so they are sent again (same client and mutation id, so the
    /// server can drop the duplicate).
    ///
    /// - Throws: what the storage throws reading a record, or the snapshot's stream reading
    ///   its mutations (`.io`, `.corrupt`); `.corrupt` when an id is past
    ///   ``largestMutationID``.
    convenience init(restoring s: consuming StoreSnapshot, journaling: Bool, storage: any ConfirmedStorage) throws(OptimistError) {
        self.init(clientID: s.clientID, journaling: journaling, storage: storage)
        for r in s.confirmed { storage.setRecord(r.collection, r.key, r.value) }
        for d in s.views {
            let v = ViewState(name: d.name, collection: d.collection, prefix: d.prefix, kind: d.kind)
            v.confirmedValue = d.confirmedValue
            v.value = d.confirmedValue  // the folds below add the overlay's changes
            collection(d.collection).views.append(v)
            views[Key(d.name)] = v
        }
        // The records are moved out of the snapshot, not copied (a copy retains its ops and
        // strings, released again with the snapshot), in id order.
        var records = [MutationRecord]()
        swap(&records, &s.mutations)
        var fold = Fold()
        if records.indices.dropFirst().allSatisfy({ records[$0 - 1].id < records[$0].id }) {
            records.withUnsafeMutableBufferPointer { $0.reverse() }  // moves (Array's own reverse copies)
        } else {
            records.sort(by: { $0.id > $1.id })
        }
        var given = [LiveMutation]()
        given.reserveCapacity(records.count)
        while let r = records.popLast() {
            if let m = fold.live(r) { given.append(m) }
        }
        try restore(given, &fold, expecting: given.count)
        if let stream = s.stream { try restore(from: stream, &fold) }
        // The key indexes were filled without their step-by-step merges: one merge each that
        // needs one (a smaller buffer waits for the next scan, as after any insert).
        for c in collections.values where c.index.needsMerge {
            c.index.prepare(contains: { c.overlay[$0] != nil })
        }
        for e in s.ended {
            fold.maxID = max(fold.maxID, e.id)
            ended.insert(e.id, e.status)
        }
        for l in s.loaded { freshness[l.collection, default: Freshness()].mark(l.range) }
        // Retried mutations sit after the others; the loader's id order is not send order.
        due.sortIfNeeded()
        syncCursor = s.syncCursor
        pullRound = s.pullRound
        // The last id handed out may be the largest itself, which leaves the next id one past
        // it (every id used: the next mutate is refused); anything beyond is damage.
        guard fold.maxID <= largestMutationID, s.nextID <= largestMutationID + 1 else {
            throw .corrupt("a mutation id (\(max(fold.maxID, s.nextID))) is past the largest a store hands out (\(largestMutationID))")
        }
        nextID = max(s.nextID, fold.maxID + 1)
        storage.endCall()
    }

    /// What the fold carries from one chunk of mutations to the next.
    struct Fold {
        /// The highest id seen, ended mutations' included.
        var maxID: MutationID = 0
        /// Mutations folded so far.
        var count = 0
        /// Most mutations touch the collection the one before touched: its state is kept at hand.
        var last: (state: CollectionState, confirmed: [Key: Record])?

        /// `r` as a live mutation (an inflight one comes back pending), or nil when it ended.
        mutating func live(_ r: consuming MutationRecord) -> LiveMutation? {
            var r = r
            maxID = max(maxID, r.id)
            if r.status == .inflight { r.status = .pending }
            guard !r.status.isEnded else { return nil }
            return LiveMutation(record: r)
        }
    }

    /// Folds `mutations` (live, in id order; a chunk or all of them) onto the engine.
    /// `expected`: how many the restore folds in all, to size the collections' tables once.
    private func restore(_ mutations: [LiveMutation], _ fold: inout Fold, expecting expected: Int) throws(OptimistError) {
        guard !mutations.isEmpty else { return }
        let touched = Self.touchedKeys(mutations)
        reserveOverlay(for: touched, share: Double(max(expected - fold.count, mutations.count)) / Double(mutations.count))
        fold.count += mutations.count
        let confirmed = try confirmedRecords(of: touched)
        fold.last = nil  // its confirmed records are this chunk's
        for m in mutations {
            live[MutationKey(m.record.id)] = m
            // Old values first (the overlay's, or the confirmed record: only the records pending
            // mutations touch are read, O(pending)), then the chain grows.
            if m.record.ops.count == 1 {
                // Most mutations have one op: no arrays of results and old values.
                let op = m.record.ops[0]
                if fold.last == nil || fold.last!.state.name != op.collection {
                    fold.last = (collection(op.collection), confirmed[op.collection] ?? [:])
                }
                self.fold(op, of: m.record.id, into: fold.last!.state, confirmed: fold.last!.confirmed)
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
    }

    /// Folds what `stream` reads: a thread of its own reads the rows and folds them into the
    /// engine (which only it touches meanwhile), while the caller's thread parses them into
    /// live mutations, a chunk at a time (see ``ChunkFolder``). On two cores the halves of a
    /// reopen overlap.
    private func restore(from stream: any MutationStream, _ fold: inout Fold) throws(OptimistError) {
        var state = fold
        let before = fold.count
        let folder = ChunkFolder(stream) { [unowned self] (mutations, expected) throws(OptimistError) in
            try self.restore(mutations, &state, expecting: before + expected)
        }
        var parsing = Fold()  // the ids seen, on this thread
        var decodeError: OptimistError?
        while var rows = folder.nextRows() {
            var chunk = [LiveMutation]()
            chunk.reserveCapacity(rows.rows.count)
            do {
                try stream.decode(rows) { r in if let m = parsing.live(r) { chunk.append(m) } }
            } catch {
                decodeError = error
                folder.stop()
                break
            }
            rows.removeAll()
            folder.hand(chunk, rows: rows)
        }
        try folder.finish()
        if let decodeError { throw decodeError }
        fold = state
        fold.maxID = max(fold.maxID, parsing.maxID)
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
        c.forEachView { $0.update(key: key, old: old, new: value) }
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
    private static func touchedKeys(_ mutations: [LiveMutation]) -> [Key: (ops: Int, singles: [Key])] {
        var out: [Key: (ops: Int, singles: [Key])] = [:]
        // Runs of mutations on one collection are counted before they are added in.
        var run: (collection: Key, ops: Int, singles: [Key])?
        for m in mutations {
            let n = m.record.ops.count
            for j in 0..<n {
                let collection = m.record.ops[j].collection
                if run == nil || run!.collection != collection {
                    if let r = run { out[r.collection, default: (0, [])].ops += r.ops; out[r.collection]!.singles += r.singles }
                    run = (collection, 0, [])
                }
                run!.ops += 1
                if n == 1 { run!.singles.append(m.record.ops[0].key) }
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

    /// Sizes each collection's chains and overlay for the ops about to be folded and, by
    /// `share` (mutations still to fold per mutation of this chunk), for those to come: an
    /// upper bound (ops on one key count once each), so 100k restored keys are not rehashed
    /// ~17 times as the dictionaries double.
    private func reserveOverlay(for touched: [Key: (ops: Int, singles: [Key])], share: Double) {
        for (name, t) in touched {
            let c = collection(name)
            let needed = c.overlay.count + t.ops
            guard needed > c.overlay.capacity || c.chains.count + t.ops > c.chains.capacity else { continue }
            let room = max(needed, c.overlay.count + Int(Double(t.ops) * share), 2 * c.overlay.capacity)
            c.chains.reserveCapacity(room)
            c.overlay.reserveCapacity(room)
        }
    }
}
