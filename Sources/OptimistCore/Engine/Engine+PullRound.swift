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
        var names = Set(collections.keys)
        for name in try storage.collectionNames() { names.insert(name) }
        var out = [Op]()
        for name in names.sorted() {
            var after: Key?
            while true {
                let page = try storage.scan(name, prefix: "", after: after, limit: 4096)
                for (key, _) in page where !named.contains(RecordAddress(collection: name, key: key)) {
                    out.append(.delete(collection: name, key: key))
                }
                guard page.count == 4096, let last = page.last else { break }
                after = last.key
            }
        }
        return out
    }
}
