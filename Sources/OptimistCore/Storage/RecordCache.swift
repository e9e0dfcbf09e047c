import OptimistModel
/// Parsed confirmed records kept in memory, bounded by an estimate of their heap bytes.
///
/// Eviction is CLOCK (second chance): entries sit in a ring; a hit sets the entry's
/// reference bit; trimming sweeps the ring, clearing set bits and evicting entries whose bit
/// is clear. It approximates LRU at the cost of one bit write per hit (no list to relink). An
/// evicted entry's place goes to the ring's last entry, the newest, which the hand looks at
/// next: a stream of misses evicts the records it brought in before those read again.
/// Absent records are cached too (a `nil` value), so asking again for a key the storage does
/// not have (a new record's first put) does not reach the disk again.
///
/// Growing never copies the whole cache. A table or an array that outgrows its room is
/// copied whole, inside whichever call inserts the entry that does not fit, a reader's get
/// among them: unsplit, a cache of 100k records rehashed and copied them all in one get
/// (milliseconds, with many page faults). So the address table is split in
/// ``shardCount`` shards by the address's hash (a growth rehashes one), and the ring is kept
/// in chunks of ``chunkSize`` entries (a growth adds one; chunks emptied keep their room).
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

    private static let shardBits = 6
    static let shardCount = 1 << shardBits
    private static let chunkBits = 12
    static let chunkSize = 1 << chunkBits
    private static let chunkMask = chunkSize - 1

    /// Each cached address's position in the ring, by shard.
    private var slots = RecordCache.noSlots
    /// An empty cache's slots, shared by every cache until its first insert copies them: a
    /// cache that is never filled allocates nothing (a closed store keeps 64 of them, one per
    /// read-cache shard, for as long as the process lives: see the C handles' tombstones).
    private static let noSlots = [[RecordAddress: Int]](repeating: [:], count: shardCount)
    /// The ring: entry `i` is `chunks[i >> chunkBits][i & chunkMask]`.
    private var chunks: [[Entry]] = []
    private var hand = 0
    package private(set) var bytes = 0
    package private(set) var count = 0
    package let budget: Int

    package init(budget: Int) { self.budget = budget }

    /// Whether the cache still shares the empty slots (it allocated none of its own).
    package var sharesEmptySlots: Bool {
        slots.withUnsafeBufferPointer { mine in
            RecordCache.noSlots.withUnsafeBufferPointer { mine.baseAddress == $0.baseAddress }
        }
    }

    /// The address's shard: the top bits of a multiplicative mix of the keys' cached hashes.
    @inline(__always) private static func shard(_ a: RecordAddress) -> Int {
        let h = (a.collection.bytesHash &* 31 &+ a.key.bytesHash) &* 0x9e37_79b9_7f4a_7c15
        return Int(truncatingIfNeeded: h >> UInt64(64 - shardBits))
    }

    /// `.some(value)` on a hit (the value may be nil: known absent); nil on a miss.
    @inline(__always) package mutating func lookup(_ a: RecordAddress) -> Record?? {
        guard let i = slots[Self.shard(a)][a] else { return nil }
        chunks[i >> Self.chunkBits][i & Self.chunkMask].referenced = true
        return .some(chunks[i >> Self.chunkBits][i & Self.chunkMask].value)
    }

    /// ``lookup(_:)`` without marking the entry referenced: reads only, so a copy shared with
    /// a thread that iterates it is not copied.
    @inline(__always) package func peek(_ a: RecordAddress) -> Record?? {
        guard let i = slots[Self.shard(a)][a] else { return nil }
        return .some(chunks[i >> Self.chunkBits][i & Self.chunkMask].value)
    }

    package mutating func insert(_ a: RecordAddress, _ value: Record?) {
        insert(a, value, bytes: RecordCache.footprint(value))
    }

    /// ``insert(_:_:)`` with the value's ``footprint(_:)`` already known (`bytes`).
    package mutating func insert(_ a: RecordAddress, _ value: Record?, bytes size: Int) {
        let s = Self.shard(a)
        if let i = slots[s][a] { return replace(i, value, bytes: size) }
        let c = count >> Self.chunkBits
        if c == chunks.count {
            var chunk = [Entry]()
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[c].append(Entry(address: a, value: value, bytes: size, referenced: false))
        slots[s][a] = count
        count += 1
        bytes += size
    }

    /// Replaces a cached entry's value; an address not cached stays uncached (a bulk write
    /// should not fill the cache with records nobody read, each costing an estimate).
    @inline(__always) package mutating func update(_ a: RecordAddress, _ value: Record?) {
        guard let i = slots[Self.shard(a)][a] else { return }
        replace(i, value, bytes: RecordCache.footprint(value))  // one probe, not a second in `insert`
    }

    /// Entry `i` takes `value`.
    @inline(__always) private mutating func replace(_ i: Int, _ value: Record?, bytes size: Int) {
        let c = i >> Self.chunkBits, j = i & Self.chunkMask
        bytes += size - chunks[c][j].bytes
        chunks[c][j].value = value
        chunks[c][j].bytes = size
        chunks[c][j].referenced = true
    }

    package mutating func remove(_ a: RecordAddress) {
        // An empty cache keeps sharing the empty slots (a removal through them would copy them).
        guard count > 0, let i = slots[Self.shard(a)].removeValue(forKey: a) else { return }
        removeEntry(i)
    }

    /// Removes entry `i` (its slot already gone): the last entry moves into its place.
    private mutating func removeEntry(_ i: Int) {
        let c = i >> Self.chunkBits, j = i & Self.chunkMask
        bytes -= chunks[c][j].bytes
        let last = count - 1
        let lc = last >> Self.chunkBits
        if i != last {
            let moved = chunks[lc][last & Self.chunkMask]
            chunks[c][j] = moved
            slots[Self.shard(moved.address)][moved.address] = i
        }
        chunks[lc].removeLast()  // keeps the chunk's room
        count -= 1
        if hand >= count { hand = 0 }
    }

    /// Evicts until the estimate fits the budget.
    package mutating func trim() {
        while bytes > budget, count > 0 {
            if hand >= count { hand = 0 }
            let c = hand >> Self.chunkBits, j = hand & Self.chunkMask
            if chunks[c][j].referenced {
                chunks[c][j].referenced = false
                hand += 1
            } else {
                // The last entry moves into `hand`: look at it next.
                slots[Self.shard(chunks[c][j].address)].removeValue(forKey: chunks[c][j].address)
                removeEntry(hand)
            }
        }
        if count == 0, !chunks.isEmpty {
            // Release the storage of a cache that emptied (a tiny budget, a close).
            slots = Self.noSlots
            chunks = []
            hand = 0
        }
    }

    /// Calls `body` with every entry, in ring order, and its estimated bytes (its value's
    /// ``footprint(_:)``).
    package func forEach(_ body: (RecordAddress, Record?, Int) -> Void) {
        for chunk in chunks { for e in chunk { body(e.address, e.value, e.bytes) } }
    }

    /// Room for `n` entries, so that filling an empty cache with them grows no table.
    package mutating func reserveCapacity(_ n: Int) {
        // Each shard's share, with slack for the uneven split (a table grows 2x when full).
        let perShard = n / Self.shardCount + n / (4 * Self.shardCount) + 4
        for s in slots.indices { slots[s].reserveCapacity(perShard) }
        let needed = (n + Self.chunkSize - 1) >> Self.chunkBits
        while chunks.count < needed {
            var chunk = [Entry]()
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
    }

    package mutating func removeAll() {
        slots = Self.noSlots
        chunks = []
        bytes = 0
        count = 0
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
        // Keys and values apart, scalars not passed on: a commit sizes the record it
        // confirms, and iterating the pairs copied each key and value (retains, releases).
        for k in o.keys { total += stringBytes(k.string) }
        for v in o.values {
            switch v {
            case .null, .bool, .number: break
            case .string(let s): total += stringBytes(s)
            case .array, .object: total += valueBytes(v)
            }
        }
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
