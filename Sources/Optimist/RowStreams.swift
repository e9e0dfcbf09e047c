import Synchronization

/// The `updates()` sequences of a live result (``LiveResults``, ``LiveGroups``): their
/// continuations by id, each given the rows when it starts and after every change. Used under
/// its owner's lock.
struct RowStreams<Row: Sendable> {
    private var continuations: [UInt64: AsyncStream<[Row]>.Continuation] = [:]
    private var next: UInt64 = 0

    /// Adds a sequence, gives it `rows` at once, and returns its id (for ``remove(_:)``).
    mutating func add(_ c: AsyncStream<[Row]>.Continuation, now rows: [Row]) -> UInt64 {
        next += 1
        continuations[next] = c
        c.yield(rows)
        return next
    }

    mutating func remove(_ id: UInt64) { continuations.removeValue(forKey: id) }

    /// Every sequence, to be given the rows outside the lock.
    var all: [AsyncStream<[Row]>.Continuation] { Array(continuations.values) }

    /// Every sequence, removed: the query closed, and they are to be finished outside the lock.
    mutating func takeAll() -> [AsyncStream<[Row]>.Continuation] {
        defer { continuations.removeAll() }
        return all
    }
}

/// A live result held weakly by its query's listener: the query (and its listener) must not
/// keep the result alive, since releasing the result is what closes the query.
final class WeakTarget<Target: AnyObject & Sendable>: Sendable {
    private let ref = Mutex<Weak?>(nil)
    private struct Weak: @unchecked Sendable { weak var value: Target? }

    init(_ target: Target) { ref.withLock { $0 = Weak(value: target) } }

    var target: Target? { ref.withLock { $0?.value } }
}
