import Foundation
import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// The read cache behind lock-free gets: a fill that raced an invalidation is refused, a
/// publish drops everything, the budget holds, and a cached get does not wait for a writer.
@Suite struct ReadCacheTests {
    static func address(_ i: Int) -> RecordAddress { RecordAddress(collection: "c", key: Key("k\(i)")) }
    static func record(_ i: Int) -> Record { ["n": .number(Double(i))] }

    @Test func aFillAfterAnInvalidationOfItsShardIsRefused() {
        let cache = ReadCache(budget: 1 << 30)
        let a = Self.address(1)
        let stale = cache.ticket(a)
        cache.invalidate(a.collection, a.key)  // a writer changed the value after the reader read it
        cache.fill(a, Self.record(1), ticket: stale)
        #expect(cache.lookup(a) == nil)
        cache.fill(a, Self.record(2), ticket: cache.ticket(a))
        #expect(cache.lookup(a) == .some(Self.record(2)))
        // Known absent is an answer too.
        let b = Self.address(2)
        cache.fill(b, nil, ticket: cache.ticket(b))
        #expect(cache.lookup(b) == .some(nil))
        cache.invalidate(b.collection, b.key)
        #expect(cache.lookup(b) == nil)
    }

    /// An invalidation looks in its shard only when the shard has entries, and then drops
    /// its own entry alone; in an empty shard it still refuses a fill that raced it.
    @Test func anInvalidationDropsItsOwnEntryAndNoOther() {
        let cache = ReadCache(budget: 1 << 30)
        for i in 0..<1000 { cache.fill(Self.address(i), Self.record(i), ticket: cache.ticket(Self.address(i))) }
        for i in stride(from: 0, to: 1000, by: 7) {
            let a = Self.address(i)
            cache.invalidate(a.collection, a.key)
        }
        for i in 0..<1000 {
            #expect(cache.lookup(Self.address(i)) == (i % 7 == 0 ? nil : .some(Self.record(i))), "\(i)")
        }
        #expect(cache.usage.entries == 1000 - 143)
        let empty = ReadCache(budget: 1 << 30), a = Self.address(1)
        let stale = empty.ticket(a)
        empty.invalidate(a.collection, a.key)
        empty.fill(a, Self.record(1), ticket: stale)
        #expect(empty.lookup(a) == nil)
    }

    @Test func invalidateAllDropsEveryEntryAndEveryTicket() {
        let cache = ReadCache(budget: 1 << 30)
        var tickets = [UInt64]()
        for i in 0..<1000 {
            tickets.append(cache.ticket(Self.address(i)))
            cache.fill(Self.address(i), Self.record(i), ticket: tickets[i])
        }
        #expect(cache.usage.entries == 1000)
        let old = cache.invalidateAll()
        #expect(old.reduce(0) { $0 + $1.count } == 1000)
        #expect(cache.usage.entries == 0)
        for i in 0..<1000 {
            #expect(cache.lookup(Self.address(i)) == nil)
            cache.fill(Self.address(i), Self.record(i), ticket: tickets[i])
        }
        #expect(cache.usage.entries == 0, "fills read before the drop were kept")
    }

    /// A staged batch's values, for the set-aside tests: it changed the even records and
    /// deleted each tenth (nil: a record it does not have).
    static func batch(_ a: RecordAddress) -> Record?? {
        let i = Int(a.key.string.dropFirst())!
        guard i % 2 == 0 else { return nil }
        return .some(i % 10 == 0 ? nil : record(i + 1))
    }

    /// Record `i`'s visible value after ``batch(_:)``.
    static func afterBatch(_ i: Int) -> Record? { i % 10 == 0 ? nil : record(i % 2 == 0 ? i + 1 : i) }

    /// After a staged batch: the entries set aside come back, the batch's records with their
    /// new values (a delete as known absent), the others as they were; a reader's fill made
    /// meanwhile (with a ticket from after the publish) stays.
    @Test func refillPutsBackTheDroppedEntriesWithTheBatchsValues() {
        let cache = ReadCache(budget: 1 << 30)
        for i in 0..<1000 { cache.fill(Self.address(i), Self.record(i), ticket: cache.ticket(Self.address(i))) }
        cache.setAside(answering: Self.batch)
        cache.fill(Self.address(2000), Self.record(2000), ticket: cache.ticket(Self.address(2000)))
        cache.refill()
        for i in 0..<1000 { #expect(cache.lookup(Self.address(i)) == .some(Self.afterBatch(i)), "\(i)") }
        #expect(cache.lookup(Self.address(2000)) == .some(Self.record(2000)))
        #expect(cache.usage.entries == 1001)
    }

    /// Between a staged batch's publish and its refill, an entry set aside still answers:
    /// with the batch's value when the batch has the record (a delete as known absent), else
    /// with its own. A record never cached still misses, a fill read before the publish is
    /// refused, and everything misses once a plain invalidateAll (a close) dropped it. After
    /// the refill the entries set aside are gone.
    @Test func droppedEntriesAnswerUntilTheRefillPutsThemBack() {
        let cache = ReadCache(budget: 1 << 30)
        for i in 0..<1000 { cache.fill(Self.address(i), Self.record(i), ticket: cache.ticket(Self.address(i))) }
        let early = cache.ticket(Self.address(5000))
        cache.setAside(answering: Self.batch)
        #expect(cache.usage.entries == 0)
        for i in 0..<1000 { #expect(cache.lookup(Self.address(i)) == .some(Self.afterBatch(i)), "\(i)") }
        #expect(cache.lookup(Self.address(5000)) == nil)
        cache.fill(Self.address(5000), Self.record(5000), ticket: early)
        #expect(cache.lookup(Self.address(5000)) == nil, "a fill read before the publish was kept")
        cache.refill()
        for i in 0..<1000 { #expect(cache.lookup(Self.address(i)) == .some(Self.afterBatch(i)), "\(i)") }
        #expect(cache.usage.entries == 1000)
        // The refill let the entries set aside go: an invalidation now leaves a miss.
        cache.invalidate(Self.address(1).collection, Self.address(1).key)
        #expect(cache.lookup(Self.address(1)) == nil)
        // A close's invalidateAll keeps nothing to answer from.
        _ = cache.invalidateAll()
        for i in 0..<1000 { #expect(cache.lookup(Self.address(i)) == nil) }
    }

    /// The refill counts each entry's bytes by the value it puts back: a batch that made
    /// records bigger makes the cache's estimate bigger, by exactly their new sizes.
    @Test func refillCountsTheNewValuesBytes() {
        let cache = ReadCache(budget: 1 << 30)
        for i in 0..<500 { cache.fill(Self.address(i), Self.record(i), ticket: cache.ticket(Self.address(i))) }
        let before = cache.usage.bytes
        let big: Record = ["n": .number(1), "note": .string(String(repeating: "x", count: 200)),
                           "tags": .array([.string(String(repeating: "y", count: 40))])]
        let grown = RecordCache.footprint(big) - RecordCache.footprint(Self.record(0))
        #expect(grown > 200)
        cache.setAside { a in Int(a.key.string.dropFirst())! < 100 ? .some(big) : nil }
        #expect(cache.usage.bytes == 0)
        cache.refill()
        #expect(cache.usage == (entries: 500, bytes: before + 100 * grown))
    }

    @Test func keepsToItsBudget() {
        let each = RecordCache.footprint(Self.record(0))
        let budget = 500 * each
        let cache = ReadCache(budget: budget)
        for i in 0..<20_000 { cache.fill(Self.address(i), Self.record(i), ticket: cache.ticket(Self.address(i))) }
        let usage = cache.usage
        #expect(usage.bytes <= budget)
        #expect(usage.entries > 100)  // and it does keep records
    }

    /// A get of a record read before is answered while another thread holds the state lock;
    /// a get of a record never read waits for it. (An order of events, not a time limit: the
    /// holder lets go only after the cached get has returned, or after ten seconds.)
    @Test func aCachedGetDoesNotWaitForTheStateLock() throws {
        let s = Store()
        try s.serverApply([.put(collection: "c", key: "cached", value: Self.record(1)),
                           .put(collection: "c", key: "cold", value: Self.record(2))])
        #expect(try s.get("c", "cached") == Self.record(1))  // fills the read cache
        let (value, whileHeld) = try readWhileStateLockHeld(s) { try s.get("c", "cached") }
        #expect(value == Self.record(1))
        #expect(whileHeld, "the cached get waited for the state lock")
        // The cold record is read under the lock, which is free again.
        #expect(try s.get("c", "cold") == Self.record(2))
    }

    /// A commit that leaves the visible value as it was (the key's only mutation, committed
    /// as sent) keeps the record's entry; one that leaves another mutation pending on the key,
    /// or that the server changed, drops it. Either way a get returns the visible value.
    @Test func aCommitThatChangesNothingVisibleKeepsTheEntry() throws {
        let s = Store()
        try s.defineView("n", collection: "c", kind: .sum(field: "n"))
        let a = RecordAddress(collection: "c", key: "k")
        let only = try s.mutate([.put(collection: "c", key: "k", value: Self.record(1))])
        #expect(try s.get("c", "k") == Self.record(1))  // fills the read cache
        try s.commit(only)
        #expect(s.readCache.lookup(a) == .some(Self.record(1)), "the entry went")
        #expect(try s.viewValue("n") == 1)

        let first = try s.mutate([.put(collection: "c", key: "k", value: Self.record(2))])
        _ = try s.mutate([.put(collection: "c", key: "k", value: Self.record(3))])
        #expect(try s.get("c", "k") == Self.record(3))
        try s.commit(first)  // the second still overlays the key
        #expect(s.readCache.lookup(a) == nil)
        #expect(try s.get("c", "k") == Self.record(3))

        let changed = try s.mutate([.put(collection: "c", key: "j", value: Self.record(4))])
        #expect(try s.get("c", "j") == Self.record(4))
        try s.commit(changed, serverOps: [.put(collection: "c", key: "j", value: Self.record(5))])
        #expect(s.readCache.lookup(RecordAddress(collection: "c", key: "j")) == nil)
        #expect(try s.get("c", "j") == Self.record(5))
        #expect(try s.viewValue("n") == 8)
    }

    /// While a staged batch's layer is published, a miss is answered by it (a delete as known
    /// absent; nothing for a record the layer leaves out); once it goes, or a close drops
    /// everything, a miss is a miss again.
    @Test func aPublishedLayerAnswersMissesUntilItGoes() {
        let cache = ReadCache(budget: 1 << 30)
        cache.answer(from: Self.batch)
        for i in 0..<1000 {
            #expect(cache.lookup(Self.address(i)) == (i % 2 == 0 ? .some(Self.afterBatch(i)) : nil), "\(i)")
        }
        #expect(cache.usage.entries == 0, "an answer was kept as an entry")
        cache.stopAnswering()
        for i in 0..<1000 { #expect(cache.lookup(Self.address(i)) == nil) }
        cache.answer(from: Self.batch)
        _ = cache.invalidateAll()
        #expect(cache.lookup(Self.address(2)) == nil)
    }

    /// A get of a staged batch's record that was never read is answered while the batch moves
    /// its records into the storage, with the state lock held by another thread; a record
    /// of the batch that a mutation overlays is not answered by the layer (its visible value
    /// is the mutation's), and neither is one the batch does not have.
    @Test func aStagedBatchsRecordsAreReadWithoutTheStateLock() throws {
        let s = Store()
        s.stagingThreshold = 8
        try s.serverApply([.put(collection: "c", key: "outside", value: Self.record(-1))])
        _ = try s.mutate([.patch(collection: "c", key: "k3", value: ["p": .bool(true)])])
        var seen: [(value: Record?, whileHeld: Bool)] = []
        var answers: [Record??] = []
        s.afterStagedPublish = {
            for key: Key in ["k1", "k2"] {
                if let r = try? readWhileStateLockHeld(s, { try s.get("c", key) }) { seen.append(r) }
            }
            answers = ["k3", "outside"].map { s.readCache.lookup(RecordAddress(collection: "c", key: $0)) }
        }
        try s.serverApply((0..<16).map { i in
            i == 2 ? .delete(collection: "c", key: Key("k\(i)")) : .put(collection: "c", key: Key("k\(i)"), value: Self.record(i))
        })
        s.afterStagedPublish = nil
        #expect(seen.count == 2)
        #expect(seen.first?.value == Self.record(1) && seen.first?.whileHeld == true, "\(seen)")
        #expect(seen.last?.value == nil && seen.last?.whileHeld == true, "\(seen)")
        #expect(answers.count == 2 && answers.allSatisfy { $0 == nil }, "\(answers)")
        #expect(try s.get("c", "k3") == ["n": .number(3), "p": .bool(true)])
        #expect(s.readCache.lookup(RecordAddress(collection: "c", key: "k5")) == nil, "the layer still answers after it went")
        #expect(try s.get("c", "k5") == Self.record(5))
    }

    @Test func closingDropsTheCacheAndGetsThenFail() throws {
        let s = Store()
        try s.serverApply([.put(collection: "c", key: "k", value: Self.record(1))])
        _ = try s.get("c", "k")
        #expect(s.readCacheUsage.entries == 1)
        try s.close()
        #expect(s.readCacheUsage.entries == 0)
        #expect(throws: OptimistError.self) { try s.get("c", "k") }
    }
}
