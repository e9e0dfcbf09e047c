import OptimistModel
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
    /// - Throws: `.io` when the rows cannot be read; `.corrupt` for a row with an unknown
    ///   status or policy.
    func readRows(into rows: inout StoredMutations, limit: Int) throws(OptimistError) -> Bool

    /// `rows` with their ops parsed, in order, each handed to `take`.
    ///
    /// - Throws: `.corrupt` for ops that do not decode.
    func decode(_ rows: borrowing StoredMutations, _ take: (MutationRecord) -> Void) throws(OptimistError)
}

/// Mutation rows as a store file holds them, their ops not parsed yet: each row's mutation
/// with no ops, and where its ops' stored text lies in one shared buffer.
package struct StoredMutations: Sendable {
    package var rows: [StoredMutationRow] = []
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}

/// One row of ``StoredMutations``: a mutation with no ops, and where its ops' stored text lies in ``StoredMutations/bytes``.
package struct StoredMutationRow: Sendable {
    package var mutation: MutationRecord
    package var ops: Range<Int>

    package init(mutation: MutationRecord, ops: Range<Int>) {
        self.mutation = mutation
        self.ops = ops
    }
}
