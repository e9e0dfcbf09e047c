/// The pending mutations in send order (``DueEntry``'s order): the outbox.
///
/// A sorted array whose front is an offset, because mutations leave it mostly from the front
/// (the oldest is sent first, and commits arrive in the order sent) and join it at the back.
/// An array's `remove(at: 0)` moved every entry after it: with 20k pending, each commit or
/// send moved ~0.5 MB (240k instructions, 11 µs a commit on the write-path bench). Here a
/// removal moves the entries on the shorter side of it, so the front and the back cost O(1)
/// and the middle at most half the queue; the room the front leaves is reclaimed once it is
/// half of the array (amortised O(1)).
struct DueQueue: Sequence {
    private var items: [DueEntry] = []
    /// Index in ``items`` of the first entry; everything before it is spent.
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }
    var first: DueEntry? { isEmpty ? nil : items[head] }
    var capacity: Int { items.capacity }

    mutating func reserveCapacity(_ n: Int) { items.reserveCapacity(head + n) }

    /// Adds `e`, which the caller knows sorts after every entry (a new mutation's).
    mutating func append(_ e: DueEntry) { items.append(e) }

    /// Adds `e` in its place, unless it is there already.
    mutating func insert(_ e: DueEntry) {
        let i = lowerBound(e)
        guard i == items.count || items[i] != e else { return }
        if i == head && head > 0 {
            head -= 1
            items[head] = e
        } else {
            items.insert(e, at: i)
        }
    }

    /// Removes `e` if it is queued.
    mutating func remove(_ e: DueEntry) {
        let i = lowerBound(e)
        if i < items.count && items[i] == e { remove(atIndex: i) }
    }

    /// Removes the entry `offset` places from the front.
    mutating func remove(at offset: Int) { remove(atIndex: head + offset) }

    /// Removes the first `k` entries.
    mutating func removeFirst(_ k: Int) {
        precondition(k >= 0 && k <= count)
        head += k
        reclaim()
    }

    /// The first `n` entries.
    func prefix(_ n: Int) -> ArraySlice<DueEntry> { items[head..<Swift.min(items.count, head + n)] }

    /// Restores the order after a load that appended out of order (retried mutations).
    mutating func sortIfNeeded() {
        let live = items[head...]
        guard live.count > 1, !zip(live, live.dropFirst()).allSatisfy({ $0.0 < $0.1 }) else { return }
        items = live.sorted()
        head = 0
    }

    func makeIterator() -> ArraySlice<DueEntry>.Iterator { items[head...].makeIterator() }

    private mutating func remove(atIndex i: Int) {
        if i - head < items.count - i {
            // Nearer the front: the entries before it move up one, and the front with them.
            var j = i
            while j > head {
                items[j] = items[j - 1]
                j -= 1
            }
            head += 1
            reclaim()
        } else {
            items.remove(at: i)
        }
    }

    /// Frees the spent front once it is half of the array (or all of it).
    private mutating func reclaim() {
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeSubrange(0..<head)
            head = 0
        }
    }

    private func lowerBound(_ e: DueEntry) -> Int {
        // New mutations are appended, so the common case is at the end.
        if let last = items.last, items.count > head, last < e { return items.count }
        var lo = head, hi = items.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if items[mid] < e { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
