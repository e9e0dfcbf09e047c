import OptimistModel
extension Engine {
    func mutate(_ ops: [Op], dedupeKey: String?, policy: FailurePolicy) throws(OptimistError) -> MutationID {
        guard !ops.isEmpty else { throw .misuse("a mutation needs at least one op") }
        if let dedupeKey, let existing = dedupe[dedupeKey] { throw .duplicate(existing: existing) }
        let id = try newID()
        if ops.count == 1 {
            try mutateOne(id, ops, dedupeKey: dedupeKey, policy: policy)
        } else {
            let results = try evaluate(ops, on: { (c, k) throws(OptimistError) in try readVisible(c, k) }, skipFailing: false)
            start(id, ops, dedupeKey: dedupeKey, policy: policy)
            for (c, key, value) in results { stage(id, c, key, value, old: visible(c, key)) }
        }
        return id
    }

    /// ``mutate(_:dedupeKey:policy:)`` of the one op `ops` holds (most taps change one
    /// record): no results array, one lookup of the collection. The op is read in place in
    /// the array, its parts taken as needed: a copy of the whole op retained each of its
    /// strings and its record, and released them, on every tap.
    @inline(__always) private func mutateOne(_ id: MutationID, _ ops: [Op], dedupeKey: String?,
                                             policy: FailurePolicy) throws(OptimistError) {
        // A put's value is the result, whatever the record was (`Op.apply`).
        if case .put(let coll, let key, let value) = ops[0] {
            return try put(id, coll, key, value, ops, dedupeKey: dedupeKey, policy: policy)
        }
        let c = collection(ops[0].collection)
        let key = ops[0].key
        let current = try readVisible(c, key)
        let value = try ops[0].apply(to: current).get()
        start(id, ops, dedupeKey: dedupeKey, policy: policy)
        stage(id, c, key, value, old: current)
    }

    /// ``mutate(_:dedupeKey:policy:)`` of the one put `ops` holds, given also as its parts
    /// (``Store/mutate(put:_:_:)``): a tap's put, with no copy of the op taken apart.
    func mutate(put coll: Key, _ key: Key, _ value: Record, ops: [Op]) throws(OptimistError) -> MutationID {
        let id = try newID()
        try put(id, coll, key, value, ops, dedupeKey: nil, policy: .rollback)
        return id
    }

    /// Mutation `id`, the put of `value` at `key` (`ops`: that put), made live and shown.
    @inline(__always) private func put(_ id: MutationID, _ coll: Key, _ key: Key, _ value: Record, _ ops: [Op],
                                       dedupeKey: String?, policy: FailurePolicy) throws(OptimistError) {
        let c = collection(coll)
        let current = try readVisible(c, key)
        start(id, ops, dedupeKey: dedupeKey, policy: policy)
        stage(id, c, key, value, old: current)
    }

    /// The id the next mutation gets (``start(_:_:dedupeKey:policy:)`` takes it), unless ids
    /// ran out.
    @inline(__always) private func newID() throws(OptimistError) -> MutationID {
        let id = nextID
        guard id <= largestMutationID else { throw Self.idsUsedUp() }
        return id
    }

    /// The error of a mutate past ``largestMutationID`` (built out of line: the message's
    /// interpolation is code a tap would otherwise carry).
    @inline(never) static func idsUsedUp() -> OptimistError {
        .state("this store has handed out every mutation id (up to \(largestMutationID))")
    }

    /// Makes mutation `id` live (the ops already evaluated; nothing can fail from here on).
    private func start(_ id: MutationID, _ ops: [Op], dedupeKey: String?, policy: FailurePolicy) {
        nextID += 1
        let record = MutationRecord(id: id, ops: ops, dedupeKey: dedupeKey, policy: policy)
        // The record is copied once, into the journal, and moved into the live mutation: read
        // back out of the object (`log(.mutation(m.record))`, `DueEntry(m.record)`), each
        // use copied all of it (retaining its ops and strings) and released the copy.
        if journal != nil { journal!.append(.mutation(record)) }
        due.append(DueEntry(id: id, queuePosition: record.queuePosition))
        live[MutationKey(id)] = LiveMutation(record: consume record)
        if let dedupeKey { dedupe[dedupeKey] = id }
    }

    /// Puts live mutation `id` on `key`'s chain and shows its result (`old`: the visible value
    /// it replaces).
    @inline(__always) private func stage(_ id: MutationID, _ c: CollectionState, _ key: Key, _ value: Record?, old: Record?) {
        noteTouch(c, key)
        if c.staged { stagingTouched.append(RecordAddress(collection: c.name, key: key)) }
        c.chains[key, default: PendingChain()].append(id)  // before setVisible: the overlay keeps V
        setVisible(c, key, value, old: old, chained: true)
    }

    /// Takes a live mutation out of `P` for good.
    func end(_ m: LiveMutation, as status: MutationStatus) {
        let id = m.record.id
        // While it is still live: a record's status before the call counts it (a kept
        // failure rolled back turns its record from failed to pending or confirmed).
        if tracksChanges {  // (the guard noteTouch makes, before a collection lookup per record)
            for a in m.touched { noteTouch(collection(a.collection), a.key) }
        }
        live.removeValue(forKey: MutationKey(id))
        if m.record.status == .pending { removeDue(m) }
        if let k = m.record.dedupeKey, dedupe[k] == id { dedupe.removeValue(forKey: k) }
        for a in m.touched {
            let c = collection(a.collection)
            if let i = c.chains.index(forKey: a.key) {
                c.chains.values[i].remove(id)
                if c.chains.values[i].isEmpty { c.chains.remove(at: i) }
            }
        }
        ended.insert(id, status)
        m.record.status = status
        recentlyEnded.append(m)
        log(.ended(id: id, status: status))
    }

    /// ``commit(_:serverOps:)`` after the authority's renames (temporary key to its own), in
    /// the order and with the effect a push's `ok` with renames has (see ``rename(_:)``).
    func commit(_ id: MutationID, serverOps: [Op]?, renames: [KeyRename]) throws(OptimistError) {
        if renames.isEmpty { return try commit(id, serverOps: serverOps) }
        _ = try liveMutation(id)
        for r in renames {
            try prefetch([RecordAddress(collection: r.collection, key: r.from), RecordAddress(collection: r.collection, key: r.to)])
        }
        // The server's ops checked first, on the records as the renames leave them (a renamed
        // record's temporary key holds nothing confirmed): a commit that cannot apply changes
        // nothing, its renames included.
        if let serverOps {
            let gone = Set(renames.filter { $0.from != $0.to }.map { RecordAddress(collection: $0.collection, key: $0.from) })
            _ = try evaluate(serverOps, on: { (c, k) throws(OptimistError) in
                gone.contains(RecordAddress(collection: c.name, key: k)) ? nil : try storage.record(c.name, k)
            }, skipFailing: false)
        }
        for r in renames where r.from != r.to { rename(r) }
        try commit(id, serverOps: serverOps)
    }

    func commit(_ id: MutationID, serverOps: [Op]?) throws(OptimistError) {
        let m = try liveMutation(id)
        if serverOps == nil, m.record.ops.count == 1 { return try commitOne(m) }
        try prefetch(m.touched)
        let results: [(CollectionState, Key, Record?)]
        if let serverOps {
            results = try evaluate(serverOps, on: { (c, k) throws(OptimistError) in try storage.record(c.name, k) }, skipFailing: false)
        } else {
            results = try evaluate(m.record.ops, on: { (c, k) throws(OptimistError) in try storage.record(c.name, k) }, skipFailing: true)
        }
        for (c, key, _) in results { noteTouch(c, key) }
        confirm(results)
        end(m, as: .committed)
        recompute(m.touched)
        if serverOps != nil {
            for (c, key, _) in results { recompute(c, key) }
        }
    }

    /// ``commit(_:serverOps:)`` of a one-op mutation with its own op (a tap's commit): the
    /// same steps, with the record's confirmed value read once (it is the prefetch, and the
    /// op's base, and what the views count out) and the value confirmed passed on to the
    /// recompute, where the general path reads the storage for each.
    ///
    /// A put or a delete replaces whatever was confirmed: with no view to count the old value
    /// out, it is not read at all (on a store file, a cold record costs no disk read). The
    /// storage keeps its own indexes (it reads the old value itself only when it has one on
    /// the collection), and listeners and live queries are told from the visible values.
    private func commitOne(_ m: LiveMutation) throws(OptimistError) {
        // The op read in place, its parts taken as needed: a copy of it retained its keys
        // and record, and released them.
        let ops = m.record.ops
        let c = collection(ops[0].collection)
        let key = ops[0].key
        let replaces = ops[0].replacesRecord && c.views.isEmpty
        let old = replaces ? nil : try stored(c.name, key)
        // The re-application rule: an op that no longer applies is skipped.
        let new: Record?
        switch ops[0].apply(to: old) {
        case .success(let r): new = r
        case .failure: new = old
        }
        noteTouch(c, key)
        // The key's place in the overlay, looked up once: confirming, ending and refolding
        // change the storage and the chains, not the overlay, until the refold sets it.
        let overlaid = c.overlay.index(forKey: key)
        confirm(c, key, new, old: old, shown: overlaid == nil)
        end(m, as: .committed)
        recompute(c, key, confirmed: new, overlaid: overlaid)
    }

    func rollback(_ id: MutationID, reason: String? = nil) throws(OptimistError) {
        let m = try liveMutation(id)
        try prefetch(m.touched)
        if let reason { m.record.lastError = reason }  // the caller's reason is its last error
        end(m, as: .rolledBack)
        recompute(m.touched)
    }

    func serverApply(_ ops: [Op]) throws(OptimistError) {
        // A bulk load (a pull) of puts and deletes that nobody watches needs no old values:
        // a put does not read what it replaces, and without views, listeners or pending
        // edits on its keys nothing else does. The records then need not be read at all.
        let blind = !tracksChanges && ops.allSatisfy { op in
            switch op {
            case .put, .delete:
                guard let c = collections[op.collection] else { return true }
                return c.views.isEmpty && c.overlay.isEmpty
            default: return false
            }
        }
        let results = try evaluate(ops, on: { (c, k) throws(OptimistError) in blind ? nil : try storage.record(c.name, k) },
                                   skipFailing: false)
        for (c, key, _) in results { noteTouch(c, key) }
        confirm(results)
        for (c, key, _) in results where c.overlay.index(forKey: key) != nil { recompute(c, key) }
    }
}
