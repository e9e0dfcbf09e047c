/// The pending mutations in send order (``DueEntry``'s order): the outbox.
///
/// Sorted entries in chunks of about ``chunkSize``, each a small array whose front is an
/// offset (the oldest leaves without moving the rest). Mutations leave
/// mostly from the front (the oldest is sent first, and commits arrive in the order sent) and
/// join at the back. One array's `remove(at: 0)` moved every entry after it: with 20k
/// pending, each commit or send moved ~0.5 MB (240k instructions, 11 µs a commit on the
/// write-path bench); and one array regrew all at once, copying the whole backlog inside a
/// tap's hold of the store's locks (9 ms at 535k pending on the 2-vCPU VM). Here a removal or
/// an insertion moves at most one chunk's entries, and growth adds a chunk.
struct DueQueue: Sequence {
    /// Small enough that moving a chunk's entries (24 bytes each) costs a commit next to
    /// nothing; a backlog of 500k is ~2,000 chunks, whose list is as cheap to move.
    static let chunkSize = 256

    /// A chunk's entries are `items[head...]`.
    private struct Chunk {
        var items: [DueEntry]
        var head = 0
        var count: Int { items.count - head }
        var first: DueEntry { items[head] }
        var live: ArraySlice<DueEntry> { items[head...] }
    }

    private var chunks: [Chunk] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    var first: DueEntry? { count == 0 ? nil : chunks[0].first }

    /// Adds `e`, which the caller knows sorts after every entry (a new mutation's).
    @inline(__always) mutating func append(_ e: DueEntry) {
        if chunks.isEmpty || chunks[chunks.count - 1].items.count >= Self.chunkSize {
            // (An emptied last chunk is kept and reused: see ``remove(chunk:at:)``.)
            var fresh = [DueEntry]()
            fresh.reserveCapacity(Self.chunkSize)
            chunks.append(Chunk(items: fresh))
        }
        chunks[chunks.count - 1].items.append(e)
        count += 1
    }

    /// Adds `e` in its place, unless it is there already.
    mutating func insert(_ e: DueEntry) {
        guard count > 0 else { return append(e) }
        let c = chunk(for: e)
        let i = Self.lowerBound(chunks[c], e)
        if i < chunks[c].items.count && chunks[c].items[i] == e { return }
        if i == chunks[c].head && chunks[c].head > 0 {
            chunks[c].head -= 1
            chunks[c].items[chunks[c].head] = e
        } else {
            chunks[c].items.insert(e, at: i)
        }
        count += 1
        if chunks[c].count > 2 * Self.chunkSize {
            let middle = chunks[c].head + Self.chunkSize
            let upper = Array(chunks[c].items[middle...])
            chunks[c].items.removeSubrange(middle...)
            chunks.insert(Chunk(items: upper), at: c + 1)
        }
    }

    /// Removes `e` if it is queued.
    mutating func remove(_ e: DueEntry) {
        guard count > 0 else { return }
        let c = chunk(for: e)
        let i = Self.lowerBound(chunks[c], e)
        if i < chunks[c].items.count && chunks[c].items[i] == e { remove(chunk: c, at: i) }
    }

    /// Removes the entry `offset` places from the front.
    mutating func remove(at offset: Int) {
        var rest = offset
        for c in chunks.indices {
            if rest < chunks[c].count { return remove(chunk: c, at: chunks[c].head + rest) }
            rest -= chunks[c].count
        }
        preconditionFailure("DueQueue.remove(at:) past the end")
    }

    /// Removes the first `k` entries.
    mutating func removeFirst(_ k: Int) {
        precondition(k >= 0 && k <= count)
        var rest = k
        var whole = 0
        while whole < chunks.count, chunks[whole].count <= rest {
            rest -= chunks[whole].count
            whole += 1
        }
        chunks.removeFirst(whole)
        if rest > 0 { chunks[0].head += rest }
        count -= k
    }

    /// The first `n` entries.
    func prefix(_ n: Int) -> [DueEntry] {
        var out = [DueEntry]()
        for chunk in chunks {
            guard out.count < n else { break }
            out.append(contentsOf: chunk.live.prefix(n - out.count))
        }
        return out
    }

    /// Restores the order after a load that appended out of order (retried mutations).
    mutating func sortIfNeeded() {
        let all = Array(self)
        guard all.count > 1, !zip(all, all.dropFirst()).allSatisfy({ $0.0 < $0.1 }) else { return }
        chunks = []
        count = 0
        for e in all.sorted() { append(e) }
    }

    func makeIterator() -> FlattenSequence<[ArraySlice<DueEntry>]>.Iterator { chunks.map(\.live).joined().makeIterator() }

    /// Removes `items[i]` of chunk `c`: the front by moving the chunk's head, else by moving
    /// the entries after it.
    private mutating func remove(chunk c: Int, at i: Int) {
        if i == chunks[c].head { chunks[c].head += 1 } else { chunks[c].items.remove(at: i) }
        count -= 1
        guard chunks[c].count == 0 else { return }
        if chunks.count == 1 {
            // The queue's only chunk is kept, emptied: a tap and its commit, one after the
            // other, would allocate and free one each time.
            chunks[0].items.removeAll(keepingCapacity: true)
            chunks[0].head = 0
        } else {
            chunks.remove(at: c)
        }
    }

    /// The chunk that holds `e`, or would: the last whose first entry does not sort after it.
    private func chunk(for e: DueEntry) -> Int {
        // New mutations are appended, and commits take the front: both ends first.
        if !(e < chunks[chunks.count - 1].first) { return chunks.count - 1 }
        if chunks.count > 1 && e < chunks[1].first { return 0 }
        var lo = 0, hi = chunks.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if e < chunks[mid].first { hi = mid - 1 } else { lo = mid }
        }
        return lo
    }

    /// Where `e` is or would go in `chunk.items` (from its head on).
    private static func lowerBound(_ chunk: Chunk, _ e: DueEntry) -> Int {
        let a = chunk.items
        if let last = a.last, last < e { return a.count }
        var lo = chunk.head, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < e { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
