import Optimist

/// What apps write by hand instead of a store with per-key pending chains. Both keep the
/// visible state as one dictionary.
typealias Table = [Key: Record]

/// Snapshot-restore rollback (the TanStack Query `onMutate` habit): copy the whole state before
/// each mutation, put the copy back when it fails. O(n) per mutation, and wrong as soon as two
/// mutations overlap: restoring the first one's snapshot erases the second.
struct SnapshotRestore: NaiveRollback {
    var state: Table
    private var snapshots: [UInt64: Table] = [:]
    private var next: UInt64 = 1

    init(_ state: Table) { self.state = state }

    /// Applies a put and keeps the snapshot taken before it.
    mutating func put(_ key: Key, _ value: Record) -> UInt64 {
        let id = next
        next += 1
        var copy = state            // the snapshot: a real copy happens on the write below
        copy[key] = value
        snapshots[id] = state
        state = copy
        return id
    }

    mutating func rollback(_ id: UInt64) {
        if let s = snapshots.removeValue(forKey: id) { state = s }
    }
}

/// Revert-everything-and-replay rollback (Relay's approach): keep an undo entry per pending
/// mutation; to roll one back, undo all pending in reverse order, drop it, and re-apply the rest.
/// Correct, but O(pending) per rollback.
struct RevertReplay: NaiveRollback {
    var state: Table
    private var pending: [(id: UInt64, key: Key, value: Record, previous: Record?)] = []
    private var next: UInt64 = 1

    init(_ state: Table) { self.state = state }

    mutating func put(_ key: Key, _ value: Record) -> UInt64 {
        let id = next
        next += 1
        pending.append((id, key, value, state[key]))
        state[key] = value
        return id
    }

    mutating func rollback(_ id: UInt64) {
        for p in pending.reversed() { state[p.key] = p.previous }
        pending.removeAll { $0.id == id }
        for i in pending.indices {
            pending[i].previous = state[pending[i].key]
            state[pending[i].key] = pending[i].value
        }
    }
}

/// What the rollback bench times on each naive baseline.
protocol NaiveRollback {
    mutating func put(_ key: Key, _ value: Record) -> UInt64
    mutating func rollback(_ id: UInt64)
}
