import OptimistModel
// A pull's reply applied so that the confirmed state only ever holds states the server had
// (see ``PullRound``): pages that more follow are staged, and the page that ends the round
// applies them all with it, at once.
extension Store {
    /// The cursor the next pull sends: a staged round's progress while one is staged (a
    /// reopened store resumes its round there), else the store's sync cursor.
    package func syncPullCursor() throws(OptimistError) -> String? {
        try read { e in e.pullRound?.cursor ?? e.syncCursor }
    }

    /// The pull round staged, if any (for status and tests).
    package func syncPullRound() throws(OptimistError) -> PullRound? {
        try read { e in e.pullRound }
    }

    /// Applies one pull reply.
    ///
    /// - `more`: the page is staged (in the store file for a file store) with the round's
    ///   progress, and nothing visible changes; `outcomes` must be empty (they settle when the
    ///   round is applied).
    /// - otherwise the round's staged pages and this page are applied as one change, with the
    ///   outcomes, and `cursor` becomes the store's sync cursor.
    /// - `reset`: the cursor the request sent was refused (another database's, or too old).
    ///   A round staged before is dropped, and this page starts a round that, at its end,
    ///   replaces every confirmed record: records it does not bring are deleted (listeners
    ///   hear of it, cause `server`); pending mutations stay and are refolded on the result.
    package func syncApplyPull(changes: [Op], outcomes: [PullOutcome], cursor: String, more: Bool, reset: Bool) throws(OptimistError) {
        if more {
            try change(.server) { e in e.stagePullPage(changes, cursor: cursor, reset: reset) }
            return
        }
        let round = reset ? nil : try syncPullRound()
        var ops = changes
        if round != nil {
            // The staged pages are read back from where the storage keeps them: a store file's
            // writer must have written them first.
            try flush()
            ops = try read { e throws(OptimistError) in try e.storage.stagedPull() }
            ops.append(contentsOf: changes)
        }
        if reset || round?.reset == true {
            let deletes = try read { e throws(OptimistError) in try e.resetDeletes(keeping: ops) }
            ops.insert(contentsOf: deletes, at: 0)
        }
        do {
            try syncApplyPull(changes: ops, outcomes: outcomes, cursor: cursor)
        } catch .invalid(let why) {
            // A change that cannot apply ends the round: the next pull starts it again from the
            // store's cursor, rather than retrying the same staged pages for ever.
            try? change(.server) { e in e.endPullRound() }
            throw .invalid(why)
        }
    }
}
