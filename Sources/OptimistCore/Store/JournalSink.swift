/// Where a store sends what changed, for a persistence layer to write in the background.
///
/// `append` is called with the store's lock held, in the order the changes happened, so it
/// must only queue the entries and return.
public protocol JournalSink: AnyObject, Sendable {
    /// Queues entries for the background writer.
    func append(_ entries: [JournalEntry])
    /// Returns once everything appended before the call is durable.
    func flush() throws(OptimistError)
    /// Flushes and releases the file.
    func close() throws(OptimistError)
    /// A background write failure not yet reported, cleared by the call; the store reports it
    /// from its next call (the unwritten entries stay queued for the next attempt).
    func takeError() -> OptimistError?
}
