/// How each ended mutation ended, two bits per id: ids are dense and increasing, so this
/// stays tiny (a million ended mutations take 250 KB) where a dictionary would not.
struct EndedSet {
    private var known: [UInt64] = []
    private var committed: [UInt64] = []

    mutating func insert(_ id: MutationID, _ status: MutationStatus) {
        let word = Int(id / 64), bit = UInt64(1) << (id % 64)
        if word >= known.count {
            let grow = max(word + 1 - known.count, known.count)
            known.append(contentsOf: repeatElement(0, count: grow))
            committed.append(contentsOf: repeatElement(0, count: grow))
        }
        known[word] |= bit
        if status == .committed { committed[word] |= bit } else { committed[word] &= ~bit }
    }

    func status(_ id: MutationID) -> MutationStatus? {
        let word = Int(truncatingIfNeeded: id / 64), bit = UInt64(1) << (id % 64)
        guard id / 64 < UInt64(known.count), known[word] & bit != 0 else { return nil }
        return committed[word] & bit != 0 ? .committed : .rolledBack
    }
}
