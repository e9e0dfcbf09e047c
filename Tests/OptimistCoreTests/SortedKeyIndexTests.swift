import Testing
@testable import OptimistCore
@testable import OptimistModel

/// The per-collection key index behind prefix scans: inserts stay O(1), scans see every live
/// key in byte order, and a collection that is never scanned does not keep every key it ever
/// had (taps that add a key and roll it back, forever).
@Suite struct SortedKeyIndexTests {
    @Test func neverScannedIndexStaysBounded() {
        var index = SortedKeyIndex()
        var live = Set<Key>()
        for i in 0..<50_000 {
            let k = Key("t\(i)")
            live.insert(k)
            index.insert(k)
            if index.needsMerge { index.prepare(contains: { live.contains($0) }) }
            live.remove(k)  // rolled back
            index.noteRemoval()
            #expect(index.unmergedCount <= 4096)
        }
        index.prepare(contains: { live.contains($0) })
        #expect(index.sorted.isEmpty)
    }

    @Test func mergesKeepByteOrderAndDropRemovedKeys() {
        var index = SortedKeyIndex()
        var live = Set<Key>()
        var seed: UInt64 = 3
        for _ in 0..<20_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let k = Key("k\(seed >> 50)")
            if live.contains(k) {
                live.remove(k)
                index.noteRemoval()
            } else {
                live.insert(k)
                index.insert(k)
                if index.needsMerge { index.prepare(contains: { live.contains($0) }) }
            }
        }
        index.prepare(contains: { live.contains($0) })
        #expect(index.sorted == live.sorted())
    }
}
