import OptimistModel

// Live queries: opened with a first evaluation over the visible records, then kept equal to
// their result by following the records each call changed (``takeDelivery()`` hands each
// changed record of a query's collection to it), never by a re-run.

extension Engine {
    /// Opens a live query: its first evaluation reads the records an index on a field its
    /// `where` narrows points to (``indexedCandidates(_:_:)``), or else the visible records
    /// of its range, once.
    func openQuery(_ spec: QuerySpec) throws(OptimistError) -> UInt64 {
        let c = collection(spec.collection)
        var records = [(key: Key, value: Record, status: RecordStatus)]()
        // The range's bounds and the predicate are the spec's to check (`load`): the records
        // read here are candidates, a superset of the result.
        if let found = try indexedCandidates(c, spec) {
            for (key, value) in found { records.append((key, value, recordStatus(c, key))) }
        } else {
            var prefix: Key = ""
            if case .prefix(let p)? = spec.range { prefix = p }
            for (key, value) in try scan(spec.collection, prefix: prefix, limit: 0) {
                records.append((key, value, recordStatus(c, key)))
            }
        }
        let id = nextQuery
        nextQuery += 1
        let q = LiveQueryState(id: id, spec: spec)
        q.load(records)
        queries[id] = q
        c.queries.append(q)
        return id
    }

    /// The visible records an index of the collection reads for `spec` (a superset of those
    /// passing its `where`, each once), or nil when no index fits (see
    /// ``QueryPredicate/indexBounds(for:)``): the storage's confirmed records in the index's
    /// spans, except those the published layer or a pending change overrides, plus every
    /// record those hold (few: O(pending), or a big batch's while it moves in).
    func indexedCandidates(_ c: CollectionState, _ spec: QuerySpec) throws(OptimistError) -> [(key: Key, value: Record)]? {
        guard let predicate = spec.predicate else { return nil }
        for field in storage.indexedFields(c.name) {
            guard let spans = predicate.indexBounds(for: field),
                  let confirmed = try storage.indexedRecords(c.name, field, IndexBounds.normalized(spans)) else { continue }
            let layerKeys = layer?.sortedKeys[c.name] ?? []
            var out = [(key: Key, value: Record)]()
            out.reserveCapacity(confirmed.count)
            for (key, value) in confirmed where c.overlay[key] == nil {
                if !layerKeys.isEmpty, layer!.value(c.name, key) != nil { continue }
                out.append((key, value))
            }
            for key in layerKeys where c.overlay[key] == nil {
                if let v = layer!.value(c.name, key), let v { out.append((key, v)) }
            }
            for (key, value) in c.overlay {
                if let value { out.append((key, value)) }
            }
            return out
        }
        return nil
    }

    /// Defines an ordered index on `field` of `collection`'s confirmed records (see
    /// ``ConfirmedStorage/defineIndex(_:_:)``).
    func defineIndex(_ collection: Key, _ field: FieldPath) throws(OptimistError) {
        try storage.defineIndex(collection, field)
    }

    /// The open query `id`.
    ///
    /// - Throws: `.misuse` when it was closed (ids are never reused).
    func liveQuery(_ id: UInt64) throws(OptimistError) -> LiveQueryState {
        guard let q = queries[id] else {
            if closed { throw .misuse("the store is closed") }
            throw .misuse("the query is closed")
        }
        return q
    }

    func closeQuery(_ id: UInt64) {
        guard let q = queries.removeValue(forKey: id) else { return }
        if let c = collections[q.spec.collection] { c.queries.removeAll { $0 === q } }
    }

    /// A record row as the visible state has it now.
    func queryRow(_ c: CollectionState, _ key: Key) -> QueryRow {
        .record(key: key, value: visible(c, key) ?? [:], status: recordStatus(c, key))
    }

    /// Hands one changed record to the queries of its collection: what it is now, and what it
    /// was before the call (which is what the queries last saw of it). `valueChanged`: whether
    /// the value differs from before (false: only the status changed, as at a commit).
    func follow(_ c: CollectionState, _ key: Key, value: Record?, status: RecordStatus, old: Before, valueChanged: Bool) {
        for q in c.queries {
            q.apply(key: key, value: value, status: status, old: (old.value, old.status), valueChanged: valueChanged,
                    changedInPlace: true, read: { self.queryRow(c, $0) })
            if !q.touched {
                q.touched = true
                queriesTouched.append(q)
            }
        }
    }

    /// The touched queries' deltas, one delivery per listener of a query whose rows changed.
    func takeQueryDeltas(into delivery: inout Delivery) {
        defer { queriesTouched.removeAll(keepingCapacity: true) }
        for q in queriesTouched {  // in the order the call first changed them
            q.touched = false
            let deltas = q.takeDeltas()
            guard !deltas.isEmpty else { continue }
            q.delivered += 1
            let number = q.delivered
            for (_, listener) in q.listeners.sorted(by: { $0.key < $1.key }) {
                delivery.append(({ _ in listener(number, deltas) }, []))
            }
        }
    }
}
