import OptimistModel
extension Engine {
    func get(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        if let c = collections[collection] { return try readVisible(c, key) }
        return try stored(collection, key)
    }

    func confirmed(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        try stored(collection, key)
    }

    func isPending(_ collection: Key, _ key: Key) -> Bool { collections[collection]?.chains[key] != nil }

    /// Visible records under `prefix` in key order: the storage's confirmed records merged with
    /// the overlay (which wins where it has the key: a pending edit, or a pending delete that
    /// hides the confirmed record). The storage is read in pages, so a limited scan reads
    /// about `limit` records whatever the collection's size.
    func scan(_ collection: Key, prefix: Key, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
        let want = limit > 0 ? limit : Int.max
        let c = collections[collection]
        var pending: [Key] = []
        var next = 0
        if let c, !c.overlay.isEmpty {
            c.index.prepare(contains: { c.overlay[$0] != nil })
            let keys = c.index.sorted
            var i = c.index.lowerBound(prefix)
            while i < keys.count, keys[i].hasBytePrefix(prefix) { pending.append(keys[i]); i += 1 }
        }
        var out = [(key: Key, value: Record)]()
        /// Emits the overlay's keys that sort before `bound` (all of them when nil).
        func drainOverlay(before bound: Key?) {
            guard let c else { return }
            while next < pending.count, out.count < want {
                let k = pending[next]
                if let bound, !(k < bound) { return }
                next += 1
                if let v = c.overlay[k], let v { out.append((k, v)) }
            }
        }
        let page = limit > 0 ? min(max(limit + pending.count, 16), 4096) : 4096
        var after: Key?
        while out.count < want {
            let rows = try storedScan(collection, prefix: prefix, after: after, limit: page)
            for (k, v) in rows {
                drainOverlay(before: k)
                guard out.count < want else { break }
                if let c, c.overlay[k] != nil { continue }  // the overlay has it (emitted, or deleted)
                out.append((k, v))
                guard out.count < want else { break }
            }
            guard rows.count == page, let last = rows.last else { break }
            after = last.key
        }
        drainOverlay(before: nil)
        return out
    }

    /// Defines (or redefines) a view: its confirmed value computed by the storage, where the
    /// records are; its visible value that plus what the overlay changes.
    func defineView(name: Key, collection: Key, prefix: Key, kind: ViewKind) throws(OptimistError) {
        let confirmedValue = try storage.aggregate(collection, prefix: prefix, kind: kind)
        let c = self.collection(collection)
        var value = confirmedValue
        for (k, v) in c.overlay where k.hasBytePrefix(prefix) {
            value += kind.contribution(v) - kind.contribution(try storage.record(collection, k))
        }
        if let old = views[name] {
            collections[old.collection]?.views.removeAll { $0 === old }
            old.retired = true
        }
        let v = ViewState(name: name.string, collection: collection, prefix: prefix, kind: kind)
        v.confirmedValue = confirmedValue
        v.value = value
        v.published.publish(value)
        c.views.append(v)
        views[name] = v
        viewDirectory?.set(name, v.published)
        log(.view(v.definition))
    }

    func markLoaded(_ collection: Key, _ range: LoadedRange) {
        freshness[collection, default: Freshness()].mark(range)
        log(.loaded(collection: collection, from: range.from, to: range.to, at: range.at))
    }

    func needsReload(_ collection: Key, _ key: Key, now: Int64, maxAge: Int64) -> Bool {
        freshness[collection]?.needsReload(key, now: now, maxAge: maxAge) ?? true
    }
}
