import OptimistCore
import OptimistModel

/// The `pull_round` and `pull_stage` tables (layout 6 on): a pull round staged until its last
/// page (see ``PullRound``). `pull_round` has one row while a round is staged: the cursor the
/// next page starts from, whether the round began with a reset, and the changes staged so far.
/// `pull_stage` has a row per staged page, its changes packed (``PackedOps``), in arrival
/// order. The background writer writes both with the journal entries that stage a page, and
/// empties both in the transaction that applies the round: a crash mid-round leaves the round
/// staged (the reopened store resumes it), never half applied.
package enum PullStageRows {
    /// The staged round's progress, nil when none is staged.
    static func round(_ c: Connection) throws(OptimistError) -> PullRound? {
        let s = try c.prepare("SELECT cursor, reset, staged FROM pull_round WHERE one = 1")
        guard try s.step() else { return nil }
        guard let cursor = s.text(0) else { throw .corrupt("the staged pull round has no cursor") }
        return PullRound(cursor: cursor, reset: s.int64(1) != 0, staged: Int(s.int64(2)))
    }

    /// Every staged change, page after page.
    static func changes(_ c: Connection) throws(OptimistError) -> [Op] {
        let s = try c.prepare("SELECT page, ops FROM pull_stage ORDER BY page")
        var out = [Op]()
        while try s.step() {
            let page = s.int64(0)
            let ops = try s.withBytes(1) { (b) throws(OptimistError) -> [Op] in
                do { return try PackedOps.decode(b) } catch { throw .corrupt("staged pull page \(page): packed ops: \(error)") }
            }
            out.append(contentsOf: ops)
        }
        return out
    }
}

extension SQLiteStorage {
    // A store file's staged changes are written by its writer, from the journal entries that
    // stage a page and end a round: nothing to keep here.
    func stagePull(_ changes: [Op]) {}

    func dropStagedPull() {}

    /// Read from the file: the caller flushed the journal, so every staged page is there.
    func stagedPull() throws(OptimistError) -> [Op] {
        try connection.serially { () throws(OptimistError) -> [Op] in try PullStageRows.changes(connection) }
    }

    var appliesStagedRounds: Bool { true }

    /// The file's records changed under this storage (its writer applied a round, and the
    /// store flushed it): nothing kept in memory is right any more. Called under the state
    /// lock with the writer idle, so every unwritten record is in the file already.
    func forgetConfirmed() {
        forgetEverythingRead()
    }

    /// The file's collections, and those of records not written yet.
    func collectionNames() throws(OptimistError) -> [Key] {
        var names = try connection.serially { () throws(OptimistError) -> Set<Key> in
            // One index seek per collection (the primary key starts with it), not a walk of
            // every record.
            let s = try connection.prepare("""
                WITH RECURSIVE c(name) AS (SELECT min(coll) FROM records
                    UNION ALL SELECT (SELECT min(coll) FROM records WHERE coll > c.name) FROM c WHERE c.name IS NOT NULL)
                SELECT name FROM c WHERE name IS NOT NULL
                """)
            var out = Set<Key>()
            while try s.step() { out.insert(Key(s.text(0) ?? "")) }
            return out
        }
        for a in unwrittenAddresses { names.insert(a.collection) }
        return Array(names)
    }
}
