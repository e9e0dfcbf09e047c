import OptimistModel
/// Status you can see: what is waiting to be sent, and why a record shows what it shows.
extension Store {
    /// The not-yet-ended mutations, in id order: all of them, or those with `status`
    /// (`.pending`, `.inflight` or `.failed`).
    ///
    /// - Throws: `.misuse` for `.committed` or `.rolledBack` (the store keeps nothing of
    ///   ended mutations but their status: see ``status(_:)``).
    public func mutations(status: MutationStatus? = nil) throws(OptimistError) -> [MutationRecord] {
        if let status, status.isEnded {
            throw .misuse("only not-yet-ended mutations are kept: ask for pending, inflight or failed ones, not \(status)")
        }
        return try read { e in e.liveMutations(status: status) }
    }

    /// The record's confirmed value, each not-yet-ended mutation on it (oldest first) with the
    /// value after it, and its visible value. A record nothing knows of explains as nil, no
    /// layers, nil.
    public func explain(_ collection: Key, _ key: Key) throws(OptimistError) -> Explanation {
        try read { e throws(OptimistError) in try e.explain(collection, key) }
    }
}
