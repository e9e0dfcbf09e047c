import OptimistCore

/// Journal entries in order, kept in chunks: appending never moves what is already there, and
/// two lists join in O(chunks).
///
/// The writer's queue used to be one array. Beside a big server batch the writer spends a long
/// time on the batch's transaction while taps keep appending, and the tap that crossed the
/// array's capacity copied it: 1,665 page faults and 8 ms in one `optimist_put` on a store
/// file (`WRITERS_RUSAGE=1` in Benchmarks/C/writers.c). Handing the written entries back for
/// the callers to free appended them to another array under the writer's monitor, which every
/// tap takes: O(entries) again, in the taps' way.
struct EntryChunks: Sequence {
    /// Entries per chunk built by ``append(_:)``: 48 KB or so, below malloc's mmap threshold.
    static let chunkSize = 1024

    private var chunks: [[JournalEntry]] = []
    private(set) var count = 0
    /// Every chunk but the last is ``chunkSize`` long (true until ``append(contentsOf:)`` or
    /// ``append(chunk:)`` adds chunks of other sizes): what ``subscript(_:)`` relies on.
    private var uniform = true

    var isEmpty: Bool { count == 0 }

    @inline(__always) mutating func append(_ e: consuming JournalEntry) {
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkSize {
            var c: [JournalEntry] = []
            c.reserveCapacity(Self.chunkSize)
            chunks.append(c)
        }
        chunks[chunks.count - 1].append(e)
        count += 1
    }

    /// The entry at `position` (0: the first appended), for a list built by ``append(_:)``
    /// alone.
    subscript(position: Int) -> JournalEntry {
        get {
            precondition(uniform && position < count, "EntryChunks: position \(position) out of range or not addressable")
            return chunks[position / Self.chunkSize][position % Self.chunkSize]
        }
        set {
            precondition(uniform && position < count, "EntryChunks: position \(position) out of range or not addressable")
            chunks[position / Self.chunkSize][position % Self.chunkSize] = newValue
        }
    }

    /// Adds `entries` as one chunk, without copying them.
    mutating func append(chunk entries: [JournalEntry]) {
        guard !entries.isEmpty else { return }
        chunks.append(entries)
        count += entries.count
        uniform = false
    }

    /// Moves `other`'s chunks to the end of this list: O(chunks), whatever their entries.
    mutating func append(contentsOf other: consuming EntryChunks) {
        guard !other.isEmpty else { return }
        if isEmpty { self = other; return }
        chunks.append(contentsOf: other.chunks)
        count += other.count
        uniform = false
    }

    /// Drops the last `k` entries (released here, by the caller's thread).
    mutating func removeLast(_ k: Int) {
        var left = Swift.min(k, count)
        count -= left
        while left > 0 {
            let last = chunks.count - 1
            let n = Swift.min(left, chunks[last].count)
            chunks[last].removeLast(n)
            if chunks[last].isEmpty { chunks.removeLast() }
            left -= n
        }
    }

    func makeIterator() -> FlattenSequence<[[JournalEntry]]>.Iterator { chunks.joined().makeIterator() }
}
