import OptimistModel
// A pull round's pages staged until its last one (see ``PullRound``): the storage keeps their
// changes, the engine the round's progress, and the journal both, in one append per page.
extension Engine {
    /// Stages one page of a round (a reply with `more: true`) and records where the round has
    /// got to. A page with `reset` starts a new round (one staged before it came from the
    /// cursor the server refused): at its end the staged changes replace every confirmed record.
    func stagePullPage(_ changes: [Op], cursor: String, reset: Bool) {
        if reset { endPullRound() }
        var round = pullRound ?? PullRound(cursor: cursor, reset: reset, staged: 0)
        round.cursor = cursor
        round.staged += changes.count
        storage.stagePull(changes)
        log(.pullStaged(changes: changes, round: round))
        pullRound = round
    }

    /// The round ends (applied, or given up): its staged changes go.
    func endPullRound() {
        guard pullRound != nil else { return }
        pullRound = nil
        storage.dropStagedPull()
        log(.pullRoundEnded)
    }

    /// For a round that began with a reset: a delete of every confirmed record that `ops` do
    /// not name, to apply before them, so that the round's end leaves exactly the records the
    /// server sent. Reads every confirmed key (a reset is rare, and replaces everything).
    func resetDeletes(keeping ops: [Op]) throws(OptimistError) -> [Op] {
        var named = Set<RecordAddress>(minimumCapacity: ops.count)
        for op in ops { named.insert(RecordAddress(collection: op.collection, key: op.key)) }
        var out = [Op]()
        for name in try confirmedCollectionNames() {
            try forEachConfirmedKey(name) { key in
                if !named.contains(RecordAddress(collection: name, key: key)) { out.append(.delete(collection: name, key: key)) }
            }
        }
        return out
    }

    /// For a page that drops whole collections (a pull reply's `drop`: the user no longer
    /// sees a shared space, whose collections are those whose names start with `S/`): a
    /// delete of every confirmed record of the collections whose name starts with one of
    /// `prefixes`, and of every record of theirs that `staged` (the round's staged changes)
    /// writes, to apply before the page's own changes. Deleting what the round staged too
    /// matters: the round's end applies the staged pages first, and a put an earlier page
    /// staged would otherwise outlive the drop. Reads every key of those collections.
    func dropDeletes(prefixes: [Key], staged: [Op]) throws(OptimistError) -> [Op] {
        func dropped(_ collection: Key) -> Bool { prefixes.contains { collection.hasBytePrefix($0) } }
        var seen = Set<RecordAddress>()
        var out = [Op]()
        func delete(_ collection: Key, _ key: Key) {
            if seen.insert(RecordAddress(collection: collection, key: key)).inserted {
                out.append(.delete(collection: collection, key: key))
            }
        }
        for name in try confirmedCollectionNames() where dropped(name) {
            try forEachConfirmedKey(name) { delete(name, $0) }
        }
        for op in staged where dropped(op.collection) { delete(op.collection, op.key) }
        return out
    }

    /// Every collection that may have confirmed records, in byte order: the storage's, the
    /// engine's, and a published layer's (whose records may not be in the storage yet).
    private func confirmedCollectionNames() throws(OptimistError) -> [Key] {
        var names = Set(collections.keys)
        for name in try storage.collectionNames() { names.insert(name) }
        if let layer { for name in layer.sortedKeys.keys { names.insert(name) } }
        return names.sorted()
    }

    /// Calls `body` with every confirmed key of `collection`, in byte order, read a page at a time.
    private func forEachConfirmedKey(_ collection: Key, _ body: (Key) -> Void) throws(OptimistError) {
        var after: Key?
        while true {
            let page = try storedScan(collection, prefix: "", after: after, limit: 4096)
            for (key, _) in page { body(key) }
            guard page.count == 4096, let last = page.last else { return }
            after = last.key
        }
    }
}
