/// Parsed confirmed records kept in memory, bounded by an estimate of their heap bytes.
///
/// Eviction is CLOCK (second chance): entries sit in a ring; a hit sets the entry's
/// reference bit; trimming sweeps the ring, clearing set bits and evicting entries whose bit
/// is clear. It approximates LRU at the cost of one bit write per hit (no list to relink).
/// Absent records are cached too (a `nil` value), so asking again for a key the storage does
/// not have (a new record's first put) does not reach the disk again.
///
/// The entries are spread over ``shardCount`` shards by their address's hash, each with its
/// own table and ring, and the sweep goes round the shards' rings one after the other (one
/// ring, cut in pieces). Why: a table or ring that outgrows its room is copied whole, inside
/// whichever call inserts the entry that does not fit, a reader's get among them. Unsharded,
/// a cache of 100k records copied and rehashed them all in one get (5-10 ms measured, with a
/// thousand page faults); a shard holds a sixty-fourth of them.
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

    private struct Shard {
        var slots: [RecordAddress: Int] = [:]
        var ring: [Entry] = []
    }

    private static let shardBits = 6
    static let shardCount = 1 << shardBits

    private var shards = [Shard](repeating: Shard(), count: shardCount)
    /// The sweep's position: a shard, and an entry in its ring.
    private var handShard = 0
    private var hand = 0
    package private(set) var bytes = 0
    package private(set) var count = 0
    package let budget: Int

    package init(budget: Int) { self.budget = budget }

    /// The address's shard: the top bits of a multiplicative mix of the keys' cached hashes.
    @inline(__always) private static func shard(_ a: RecordAddress) -> Int {
        let h = (a.collection.bytesHash &* 31 &+ a.key.bytesHash) &* 0x9e37_79b9_7f4a_7c15
        return Int(truncatingIfNeeded: h >> UInt64(64 - shardBits))
    }

    /// `.some(value)` on a hit (the value may be nil: known absent); nil on a miss.
    @inline(__always) package mutating func lookup(_ a: RecordAddress) -> Record?? {
        let s = Self.shard(a)
        guard let i = shards[s].slots[a] else { return nil }
        shards[s].ring[i].referenced = true
        return .some(shards[s].ring[i].value)
    }

    package mutating func insert(_ a: RecordAddress, _ value: Record?) {
        let size = RecordCache.footprint(value)
        let s = Self.shard(a)
        if let i = shards[s].slots[a] {
            bytes += size - shards[s].ring[i].bytes
            shards[s].ring[i].value = value
            shards[s].ring[i].bytes = size
            shards[s].ring[i].referenced = true
            return
        }
        shards[s].slots[a] = shards[s].ring.count
        shards[s].ring.append(Entry(address: a, value: value, bytes: size, referenced: false))
        bytes += size
        count += 1
    }

    /// Replaces a cached entry's value; an address not cached stays uncached (a bulk write
    /// should not fill the cache with records nobody read, each costing an estimate).
    @inline(__always) package mutating func update(_ a: RecordAddress, _ value: Record?) {
        guard shards[Self.shard(a)].slots[a] != nil else { return }
        insert(a, value)
    }

    package mutating func remove(_ a: RecordAddress) {
        let s = Self.shard(a)
        guard let i = shards[s].slots.removeValue(forKey: a) else { return }
        removeEntry(s, i)
    }

    /// Removes entry `i` of shard `s` (its slot already gone): the shard's last entry moves
    /// into its place.
    private mutating func removeEntry(_ s: Int, _ i: Int) {
        bytes -= shards[s].ring[i].bytes
        count -= 1
        let last = shards[s].ring.count - 1
        if i != last {
            shards[s].ring[i] = shards[s].ring[last]
            shards[s].slots[shards[s].ring[i].address] = i
        }
        shards[s].ring.removeLast()
    }

    /// Evicts until the estimate fits the budget.
    package mutating func trim() {
        while bytes > budget, count > 0 {
            if hand >= shards[handShard].ring.count {
                handShard = (handShard + 1) & (Self.shardCount - 1)
                hand = 0
                continue
            }
            if shards[handShard].ring[hand].referenced {
                shards[handShard].ring[hand].referenced = false
                hand += 1
            } else {
                // The shard's last entry moves into `hand`: look at it next.
                shards[handShard].slots.removeValue(forKey: shards[handShard].ring[hand].address)
                removeEntry(handShard, hand)
            }
        }
        if count == 0 {
            // Release the storage of a cache that emptied (a tiny budget, a close).
            for s in shards.indices where shards[s].ring.capacity > 0 { shards[s] = Shard() }
        }
    }

    package mutating func removeAll() {
        shards = [Shard](repeating: Shard(), count: Self.shardCount)
        bytes = 0
        count = 0
        handShard = 0
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
