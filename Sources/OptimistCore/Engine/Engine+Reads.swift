extension Engine {
    func get(_ collection: Key, _ key: Key) -> Record? { collections[collection]?.visible[key] }

    func confirmed(_ collection: Key, _ key: Key) -> Record? { collections[collection]?.confirmed[key] }

    func isPending(_ collection: Key, _ key: Key) -> Bool { collections[collection]?.chains[key] != nil }

    func scan(_ collection: Key, prefix: Key, limit: Int) -> [(key: Key, value: Record)] {
        guard let c = collections[collection] else { return [] }
        c.index.prepare(contains: { c.visible[$0] != nil })
        var out = [(key: Key, value: Record)]()
        var i = c.index.lowerBound(prefix)
        let keys = c.index.sorted
        while i < keys.count && (limit <= 0 || out.count < limit) {
            let k = keys[i]
            guard k.hasBytePrefix(prefix) else { break }
            if let v = c.visible[k] { out.append((k, v)) }
            i += 1
        }
        return out
    }

    func defineView(name: Key, collection: Key, prefix: Key, kind: ViewKind) {
        if let old = views[name], let c = collections[old.collection] {
            c.views.removeAll { $0 === old }
        }
        let v = ViewState(name: name.string, collection: collection, prefix: prefix, kind: kind)
        let c = self.collection(collection)
        for (k, r) in c.visible where k.hasBytePrefix(prefix) { v.value += v.contribution(r) }
        c.views.append(v)
        views[name] = v
    }

    func markLoaded(_ collection: Key, _ range: LoadedRange) {
        freshness[collection, default: Freshness()].mark(range)
        log(.loaded(collection: collection, from: range.from, to: range.to, at: range.at))
    }

    func needsReload(_ collection: Key, _ key: Key, now: Int64, maxAge: Int64) -> Bool {
        freshness[collection]?.needsReload(key, now: now, maxAge: maxAge) ?? true
    }
}
