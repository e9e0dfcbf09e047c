import Glibc
import Optimist

/// The optimistic flow: a tap is one `mutate` (one put) on a file-backed store, whose writer
/// persists it in the background, and the checkmark screen reads today's count from a count
/// view in O(1).
final class OptimisticFlow {
    let store: Store
    let n: Int
    let fileBacked: Bool
    static let logs: Key = "logs"

    /// Opens a store at `path` (falling back to memory while file-backed stores are not built)
    /// and loads `n` logs as confirmed server state.
    init(path: String, n: Int) throws {
        self.n = n
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        var s: Store
        var file = true
        do { s = try Store.open(path: path) } catch {
            note("swift: file-backed store unavailable (\(error)); using an in-memory store")
            s = try Store.open(path: nil)
            file = false
        }
        store = s
        fileBacked = file
        var chunk = [Op]()
        chunk.reserveCapacity(10_000)
        for i in 0..<n {
            let e = Workload.existing(i, n: n)
            chunk.append(.put(collection: Self.logs, key: Key(e.key), value: Workload.record(day: e.day, habit: e.habit, seq: i)))
            if chunk.count == 10_000 { try store.serverApply(chunk); chunk.removeAll(keepingCapacity: true) }
        }
        if !chunk.isEmpty { try store.serverApply(chunk) }
        let today = Workload.day(Workload.todayIndex(n: n))
        try store.defineView("today", collection: Self.logs, prefix: Key(today + "/"), kind: .count)
        try store.flush()
    }

    /// One tap: apply the log optimistically and read the recomputed count.
    func tap(day: String, habit: String, seq: Int) throws -> (MutationID, Double) {
        let key = Key(Workload.key(day: day, habit: habit))
        let id = try store.mutate([.put(collection: Self.logs, key: key, value: Workload.record(day: day, habit: habit, seq: seq))])
        return (id, try store.viewValue("today"))
    }

    /// Untimed clean-up after a tap, so every repetition sees the same n.
    func undo(_ id: MutationID) throws { try store.rollback(id) }

    func close() throws { try store.close() }
}
