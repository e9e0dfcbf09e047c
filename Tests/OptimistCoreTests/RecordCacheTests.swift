import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// The cache of parsed records: a budget it keeps to, CLOCK's second chance, and answers
/// that match a plain dictionary's whatever shard an address lands in.
@Suite struct RecordCacheTests {
    static func address(_ i: Int, in collection: Key = "c") -> RecordAddress { RecordAddress(collection: collection, key: Key("k\(i)")) }
    static func record(_ i: Int) -> Record { ["n": .number(Double(i))] }
    static let each = RecordCache.footprint(record(0))

    @Test func answersAsADictionaryWhenNothingIsEvicted() {
        var cache = RecordCache(budget: 1 << 40)
        var model = [RecordAddress: Record?]()
        var rng = SeededRandom(seed: 7)
        for _ in 0..<50_000 {
            let a = Self.address(Int(rng.next() % 3000), in: rng.next() % 2 == 0 ? "c" : "d")
            switch rng.next() % 4 {
            case 0: cache.insert(a, nil); model[a] = .some(nil)
            case 1: let r = Self.record(Int(rng.next() % 100)); cache.insert(a, r); model[a] = .some(r)
            case 2: cache.remove(a); model[a] = nil
            default:
                let r = Self.record(Int(rng.next() % 100))
                cache.update(a, r)
                if model[a] != nil { model[a] = .some(r) }
            }
        }
        cache.trim()
        #expect(cache.count == model.count)
        for i in 0..<3000 {
            for c: Key in ["c", "d"] {
                let a = Self.address(i, in: c)
                #expect(cache.peek(a) == model[a], "\(a)")
                #expect(cache.lookup(a) == model[a], "\(a)")
            }
        }
    }

    /// A peek answers as a lookup does but gives no second chance: a trim passes over the
    /// entries read and evicts the first one only peeked at.
    /// A cache that was never filled allocates no table of its own, and one that empties gives
    /// its table back: a closed store keeps its read cache's 64 empty shards for as long as
    /// the process lives (the C handles' tombstones), which cost 35 KiB a store with a table each.
    @Test func anEmptyCacheAllocatesNoSlots() {
        var cache = RecordCache(budget: 1)
        #expect(cache.sharesEmptySlots)
        #expect(cache.lookup(Self.address(1)) == nil)
        #expect(cache.peek(Self.address(1)) == nil)
        cache.remove(Self.address(1))
        cache.update(Self.address(1), Self.record(1))
        #expect(cache.sharesEmptySlots)  // reads, and changes of what is not there, copy nothing
        cache.insert(Self.address(1), Self.record(1))
        #expect(!cache.sharesEmptySlots)
        #expect(cache.lookup(Self.address(1)) == .some(Self.record(1)))
        cache.trim()  // the budget of 1 keeps nothing: the emptied cache lets its table go
        #expect(cache.count == 0 && cache.sharesEmptySlots)
        cache.insert(Self.address(2), nil)
        cache.removeAll()
        #expect(cache.sharesEmptySlots)
        #expect(RecordCache(budget: 1 << 20).sharesEmptySlots)
    }

    @Test func aPeekDoesNotMarkTheEntry() {
        var cache = RecordCache(budget: 100 * Self.each)
        for i in 0..<100 { cache.insert(Self.address(i), Self.record(i)) }
        for i in 0..<100 {
            if i % 2 == 0 { _ = cache.lookup(Self.address(i)) } else { #expect(cache.peek(Self.address(i)) == .some(Self.record(i))) }
        }
        cache.insert(Self.address(100), Self.record(100))
        cache.trim()
        #expect(cache.count == 100)
        #expect(cache.peek(Self.address(1)) == nil, "the first entry only peeked at is evicted")
        for i in stride(from: 0, to: 100, by: 2) { #expect(cache.peek(Self.address(i)) != nil, "\(i) was read") }
    }

    @Test func trimKeepsTheBudgetAndGivesReadEntriesASecondChance() {
        let n = 4000
        var cache = RecordCache(budget: n * Self.each)
        for i in 0..<n { cache.insert(Self.address(i), Self.record(i)) }
        cache.trim()
        #expect(cache.count == n)
        // Read the first half, then add half as many again: the sweep must evict that many,
        // and finds enough entries nobody read to spare every one that was.
        for i in 0..<(n / 2) { _ = cache.lookup(Self.address(i)) }
        for i in n..<(n + n / 2) { cache.insert(Self.address(i), Self.record(i)) }
        cache.trim()
        #expect(cache.bytes <= cache.budget)
        #expect(cache.count == n)
        for i in 0..<(n / 2) { #expect(cache.lookup(Self.address(i)) == .some(Self.record(i)), "k\(i) was read and evicted") }
    }

    /// A stream of misses (records read once, a cyclic pass over more records than fit)
    /// evicts what it brought in, not the records already cached.
    @Test func aStreamOfMissesEvictsItsOwnRecords() {
        let n = 3000
        var cache = RecordCache(budget: n * Self.each)
        for i in 0..<n { cache.insert(Self.address(i), Self.record(i)) }
        cache.trim()
        for i in n..<(n + 5000) {
            cache.insert(Self.address(i), Self.record(i))
            cache.trim()
        }
        #expect(cache.count == n)
        var kept = 0
        for i in 0..<n where cache.lookup(Self.address(i)) != nil { kept += 1 }
        #expect(kept >= n - 1)
    }

    @Test func aTinyBudgetKeepsNothingBetweenCalls() {
        var cache = RecordCache(budget: 1)
        for i in 0..<1000 { cache.insert(Self.address(i), Self.record(i)) }
        #expect(cache.count == 1000)  // within a call nothing is evicted
        cache.trim()
        #expect(cache.count == 0)
        #expect(cache.bytes == 0)
        #expect(cache.lookup(Self.address(3)) == nil)
        cache.insert(Self.address(3), nil)
        #expect(cache.lookup(Self.address(3)) == .some(nil))
    }

    /// Room reserved ahead changes no answer, and entries inserted with their size given are
    /// counted as inserted without it; `forEach` hands back those sizes.
    @Test func reservedRoomAndGivenSizesAnswerAsUsual() {
        var reserved = RecordCache(budget: 1 << 30), plain = RecordCache(budget: 1 << 30)
        reserved.reserveCapacity(10_000)
        for i in 0..<9_000 {
            reserved.insert(Self.address(i), Self.record(i), bytes: RecordCache.footprint(Self.record(i)))
            plain.insert(Self.address(i), Self.record(i))
        }
        #expect(reserved.count == plain.count)
        #expect(reserved.bytes == plain.bytes)
        for i in stride(from: 0, to: 9_000, by: 7) { #expect(reserved.lookup(Self.address(i)) == .some(Self.record(i))) }
        #expect(reserved.lookup(Self.address(9_001)) == nil)
        var sized = 0
        reserved.forEach { _, value, bytes in
            #expect(bytes == RecordCache.footprint(value))
            sized += bytes
        }
        #expect(sized == reserved.bytes)
    }

    @Test func updateLeavesAnUncachedAddressUncached() {
        var cache = RecordCache(budget: 1 << 20)
        cache.update(Self.address(1), Self.record(1))
        #expect(cache.lookup(Self.address(1)) == nil)
        cache.insert(Self.address(1), Self.record(1))
        cache.update(Self.address(1), Self.record(2))
        #expect(cache.lookup(Self.address(1)) == .some(Self.record(2)))
        cache.removeAll()
        #expect(cache.count == 0 && cache.bytes == 0)
        #expect(cache.lookup(Self.address(1)) == nil)
    }
}
