import OptimistModel
/// Where a store sends what changed, for a persistence layer to write in the background.
///
/// `append` is called with the store's lock held, in the order the changes happened, so it
/// must only queue the entries and return. Each append carries its number, which the store's
/// storage named (``ConfirmedStorage/sealAppend()``): increasing from 1, one per append.
package protocol JournalSink: AnyObject, Sendable {
    /// Queues entries for the background writer, as append `number`.
    func append(_ entries: [JournalEntry], number: UInt64)
    /// Queues entries for the background writer, as append `number`, moving them out of
    /// `entries` and leaving it empty with its capacity (the store's journal buffer, reused by
    /// its next change). The default copies them through ``append(_:number:)``; a sink that
    /// moves them saves the store a copy and a release of every entry.
    func append(taking entries: inout [JournalEntry], number: UInt64)
    /// Returns once everything appended before the call is durable.
    func flush() throws(OptimistError)
    /// Flushes and releases the file.
    func close() throws(OptimistError)
    /// A background write failure not yet reported, cleared by the call; the store reports it
    /// from its next call (the unwritten entries stay queued for the next attempt).
    func takeError() -> OptimistError?
}

extension JournalSink {
    /// Copies the entries through ``append(_:number:)``, then empties `entries` in place.
    package func append(taking entries: inout [JournalEntry], number: UInt64) {
        append(entries, number: number)
        // One entry at a time (a tap journals one): `removeAll(keepingCapacity:)` goes through
        // the general range replacement, which costs a tap more than popping its one entry.
        while entries.popLast() != nil {}
    }
}

/// What changed in a store, in order, for a persistence layer: confirmed records, live
/// mutations (written whole on every change), ended mutations, loaded ranges and the sync
/// cursor.
package enum JournalEntry: Sendable {
    case confirmed(collection: Key, key: Key, value: Record?)
    case mutation(MutationRecord)
    case ended(id: MutationID, status: MutationStatus)
    case loaded(collection: Key, from: Key, to: Key, at: Int64)
    /// The sync's pull cursor (opaque, from the server), written with the pull it ends.
    case syncCursor(String?)
    /// A page of a pull round, staged (see ``PullRound``): its changes, to keep beside the
    /// records until the round ends, and the round's progress after it.
    case pullStaged(changes: [Op], round: PullRound)
    /// The pull round ended (applied with the entries before this one in the same append, or
    /// dropped): its staged changes and progress go.
    case pullRoundEnded
    /// The staged round ends in the file itself (a store file with nobody watching the
    /// records, see ``Store/syncApplyPull(changes:outcomes:cursor:more:reset:)``): the writer
    /// applies the staged pages to the records in order, a page at a time (all records first
    /// removed when `reset`), records `cursor` as the sync cursor and empties the staging, in
    /// one transaction. The store appends it alone (the writer's queue empty before and after),
    /// so no other change's records fold into its transaction.
    case pullRoundApplied(cursor: String, reset: Bool)
    /// A view's definition and confirmed value (after `defineView`, and after a call that
    /// changed its confirmed value).
    case view(ViewDefinition)
    /// Entries appended as one (a staged batch's records, one per record): queued in one
    /// step, so that handing a 100k-record batch to the sink under the writers' lock costs
    /// no more than a tap's append; the writer takes them in order.
    indirect case block([JournalEntry])
}
