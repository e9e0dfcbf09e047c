import OptimistModel
/// The last ``capacity`` mutations that ended (committed or rolled back), as they ended, so a
/// UI can still ask what one was and why it was undone (its `lastError`) after it ended.
///
/// A ring of the ended mutations' own objects: ending one costs a store into the ring (the
/// object is already made; no record is copied), and a lookup, which only a status query
/// makes, walks at most ``capacity`` entries. It lives in memory only: after a reopen the
/// store file knows an older mutation's final status (``EndedSet``), not its record.
struct RecentlyEnded {
    static let capacity = 1_000

    private var ring: [LiveMutation] = []
    /// Where the next ended mutation goes once the ring is full.
    private var next = 0

    mutating func append(_ m: LiveMutation) {
        if ring.count < Self.capacity {
            ring.append(m)
        } else {
            ring[next] = m
            next = next == Self.capacity - 1 ? 0 : next + 1
        }
    }

    /// Ended mutation `id`'s record (its final status in it), if it is among the last ones.
    func record(_ id: MutationID) -> MutationRecord? {
        for m in ring where m.record.id == id { return m.record }
        return nil
    }
}
