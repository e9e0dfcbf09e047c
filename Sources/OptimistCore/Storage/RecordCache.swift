/// Parsed confirmed records kept in memory, bounded by an estimate of their heap bytes.
///
/// Eviction is CLOCK (second chance): entries sit in a ring; a hit sets the entry's
/// reference bit; trimming sweeps the ring, clearing set bits and evicting entries whose bit
/// is clear. It approximates LRU at the cost of one bit write per hit (no list to relink).
/// Absent records are cached too (a `nil` value), so asking again for a key the storage does
/// not have (a new record's first put) does not reach the disk again.
///
/// The budget is enforced by ``trim()``, which the storage calls at the end of each store
/// call: within a call nothing is evicted.
package struct RecordCache {
    private struct Entry {
        var address: RecordAddress
        var value: Record?
        var bytes: Int
        var referenced: Bool
    }

    private var slots: [RecordAddress: Int] = [:]
    private var ring: [Entry] = []
    private var hand = 0
    package private(set) var bytes = 0
    package let budget: Int

    package init(budget: Int) { self.budget = budget }

    package var count: Int { ring.count }

    /// `.some(value)` on a hit (the value may be nil: known absent); nil on a miss.
    @inline(__always) package mutating func lookup(_ a: RecordAddress) -> Record?? {
        guard let i = slots[a] else { return nil }
        ring[i].referenced = true
        return .some(ring[i].value)
    }

    package mutating func insert(_ a: RecordAddress, _ value: Record?) {
        let size = RecordCache.footprint(value)
        if let i = slots[a] {
            bytes += size - ring[i].bytes
            ring[i].value = value
            ring[i].bytes = size
            ring[i].referenced = true
            return
        }
        slots[a] = ring.count
        ring.append(Entry(address: a, value: value, bytes: size, referenced: false))
        bytes += size
    }

    /// Replaces a cached entry's value; an address not cached stays uncached (a bulk write
    /// should not fill the cache with records nobody read, each costing an estimate).
    @inline(__always) package mutating func update(_ a: RecordAddress, _ value: Record?) {
        guard slots[a] != nil else { return }
        insert(a, value)
    }

    package mutating func remove(_ a: RecordAddress) {
        guard let i = slots.removeValue(forKey: a) else { return }
        bytes -= ring[i].bytes
        let last = ring.count - 1
        if i != last {
            ring[i] = ring[last]
            slots[ring[i].address] = i
        }
        ring.removeLast()
        if hand >= ring.count { hand = 0 }
    }

    /// Evicts until the estimate fits the budget.
    package mutating func trim() {
        while bytes > budget, !ring.isEmpty {
            if hand >= ring.count { hand = 0 }
            if ring[hand].referenced {
                ring[hand].referenced = false
                hand += 1
            } else {
                remove(ring[hand].address)  // the last entry moves into `hand`: look at it next
            }
        }
        if ring.isEmpty {
            // Release the storage of a cache that emptied (a tiny budget, a close).
            slots = [:]
            ring = []
        }
    }

    package mutating func removeAll() {
        slots = [:]
        ring = []
        bytes = 0
        hand = 0
    }

    // MARK: Size estimates

    /// Estimated heap bytes of a parsed record: what the cache charges for it.
    ///
    /// A `[Key: JSON]` dictionary allocates a power-of-two number of buckets (at most 3/4
    /// full), each holding a key (24 bytes) and a value (24 bytes), plus a header; strings of
    /// more than 15 UTF-8 bytes live on the heap; arrays hold 24-byte elements. The estimate
    /// follows that layout (and adds the entry's own bookkeeping), so a budget is close to
    /// the memory it bounds.
    package static func footprint(_ value: Record?) -> Int {
        guard let value else { return entryOverhead }
        return entryOverhead + objectBytes(value)
    }

    static let entryOverhead = 96

    static func objectBytes(_ o: [Key: JSON]) -> Int {
        var buckets = 1
        while buckets * 3 < o.capacity * 4 { buckets <<= 1 }
        var total = 64 + buckets * 48
        for (k, v) in o { total += stringBytes(k.string) + valueBytes(v) }
        return total
    }

    static func valueBytes(_ v: JSON) -> Int {
        switch v {
        case .null, .bool, .number: return 0
        case .string(let s): return stringBytes(s)
        case .array(let items): return 32 + items.count * 24 + items.reduce(0) { $0 + valueBytes($1) }
        case .object(let o): return objectBytes(o)
        }
    }

    @inline(__always) static func stringBytes(_ s: String) -> Int {
        let n = s.utf8.count
        return n <= 15 ? 0 : 32 + n
    }
}
