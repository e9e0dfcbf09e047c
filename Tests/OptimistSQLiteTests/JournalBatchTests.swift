import Testing
import OptimistTestSupport
@testable import OptimistCore
@testable import OptimistModel
@testable import OptimistSQLite

/// The writer inserts a batch's records in (collection, key) byte order, each exactly once.
@Suite struct JournalBatchTests {
    @Test(arguments: [1, 2, 1_000, 20_000])
    func recordsComeInKeyOrderEachOnce(count: Int) {
        var g = SeededRandom(seed: UInt64(count))
        var batch = JournalBatch()
        // Five collections, and for the biggest batch 300 more.
        let collections: [Key] = ["logs", "habits", "a", "logs/2", "é"] + (count >= 20_000 ? (0..<300).map { Key("c\($0)") } : [])
        let prefixes = ["", "k", "2026-11-24/habit/", "2026-11-24/habit/é", "0123456789abcde"]
        var entries: [JournalEntry] = []
        for i in 0..<count {
            let c = collections[Int.random(in: 0..<collections.count, using: &g)]
            let k = Key(prefixes[Int.random(in: 0..<prefixes.count, using: &g)] + String(Int.random(in: 0..<(count * 2), using: &g)))
            entries.append(.confirmed(collection: c, key: k, value: i % 7 == 0 ? nil : ["n": .number(Double(i))]))
        }
        batch.fold(entries)
        let order = batch.recordsInKeyOrder()
        #expect(order.count == batch.records.count)
        #expect(Set(order.map { batch.records[$0].key }).count == batch.records.count)
        let addresses = order.map { batch.records[$0].key }
        for (a, b) in zip(addresses, addresses.dropFirst()) {
            let x = Array(a.collection.string.utf8), y = Array(b.collection.string.utf8)
            if x != y {
                #expect(x.lexicographicallyPrecedes(y), "\(a) before \(b)")
            } else {
                #expect(Array(a.key.string.utf8).lexicographicallyPrecedes(Array(b.key.string.utf8)), "\(a) before \(b)")
            }
        }
    }
}
