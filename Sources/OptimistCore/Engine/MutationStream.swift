/// Live mutations a store file reads as the store restores itself (see
/// ``StoreSnapshot/stream``), in two halves that run on two threads at once: reading the rows
/// (``readRows(into:limit:)``, on the thread that also folds them into the engine) and parsing
/// them (``decode(_:_:)``, on the caller's thread). See ``Engine`` `restore(from:)`.
package protocol MutationStream: AnyObject, Sendable {
    /// How many live mutations there are, to size the store's tables once. Called first, on
    /// the reading thread.
    func count() throws(OptimistError) -> Int

    /// Up to `limit` of the next rows, in id order, into `rows` (emptied first; its room is
    /// kept, so buffers go round without new allocations). False once there are no more (the
    /// last rows may come with it).
    ///
    /// - Throws: `.io` or `.corrupt` when the rows cannot be read.
    func readRows(into rows: inout StoredMutations, limit: Int) throws(OptimistError) -> Bool

    /// `rows` parsed, in order, each handed to `take`.
    ///
    /// - Throws: `.corrupt` for a row that does not decode.
    func decode(_ rows: borrowing StoredMutations, _ take: (MutationRecord) -> Void) throws(OptimistError)
}

/// Mutation rows as a store file holds them, not parsed yet: the fields of each row, with its
/// ops as their stored text in one shared buffer.
package struct StoredMutations: Sendable {
    package struct Row: Sendable {
        package var id: MutationID
        package var status: Int64
        package var attempts: Int64
        package var nextAttemptAt: Int64
        package var dedupeKey: String?
        package var policy: Int64
        package var lastError: String?
        package var retry: Int64
        package var queuePosition: UInt64?
        /// Where the row's ops text lies in ``bytes``.
        package var ops: Range<Int>

        package init(id: MutationID, status: Int64, attempts: Int64, nextAttemptAt: Int64, dedupeKey: String?,
                     policy: Int64, lastError: String?, retry: Int64, queuePosition: UInt64?, ops: Range<Int>) {
            self.id = id
            self.status = status
            self.attempts = attempts
            self.nextAttemptAt = nextAttemptAt
            self.dedupeKey = dedupeKey
            self.policy = policy
            self.lastError = lastError
            self.retry = retry
            self.queuePosition = queuePosition
            self.ops = ops
        }
    }

    package var rows: [Row] = []
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}
