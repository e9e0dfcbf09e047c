import Testing
import Synchronization
@testable import OptimistCore
@testable import OptimistModel

/// An in-memory store's pull rounds: pages staged in memory, applied at the round's end as one
/// change (views, listeners and pending mutations see the whole round at once).
@Suite struct PullRoundStagingTests {
    @Test(arguments: [1 << 20, 1])  // an ordinary change, and the staged (layer) one
    func aRoundIsAppliedAtOnce(threshold: Int) throws {
        let s = Store()
        s.stagingThreshold = threshold
        try s.defineView("sum", collection: "a", kind: .sum(field: "n"))
        try s.mutate([incr("a", "x", "n", 100)])
        let batches = Mutex<[[Change]]>([])
        try s.subscribe(collection: "a") { c in batches.withLock { $0.append(c) } }
        try s.syncApplyPull(changes: [put("a", "x", ["n": 1]), put("a", "y", ["n": 2])], outcomes: [], cursor: "1",
                            more: true, reset: false)
        try s.syncApplyPull(changes: [put("a", "y", ["n": 20])], outcomes: [], cursor: "2", more: true, reset: false)
        #expect(try s.confirmed("a", "y") == nil)
        #expect(try s.viewValue("sum") == 100)
        #expect(batches.withLock { $0.isEmpty })
        #expect(try s.syncPullCursor() == "2")
        #expect(try s.syncCursor() == nil)
        try s.syncApplyPull(changes: [put("a", "z", ["n": 3])], outcomes: [], cursor: "3", more: false, reset: false)
        #expect(try s.confirmed("a", "y") == ["n": 20])
        #expect(try s.get("a", "x") == ["n": 101])  // the pending incr, refolded
        #expect(try s.viewValue("sum") == 124)
        #expect(try s.syncCursor() == "3")
        #expect(try s.syncPullRound() == nil)
        let heard = batches.withLock { $0 }
        #expect(heard.count == 1)
        #expect(Set(heard.flatMap { $0 }.map(\.key)) == ["x", "y", "z"])
        #expect(heard.flatMap { $0 }.allSatisfy { $0.cause == .server })
    }

    /// A reset reply mid-round drops the round staged before it: the new round starts from the
    /// beginning and replaces the confirmed records.
    @Test func aResetMidRoundStartsTheRoundAgain() throws {
        let s = Store()
        try s.syncApplyPull(changes: [put("a", "keep", ["n": 1]), put("b", "gone", ["n": 1])], outcomes: [], cursor: "1",
                            more: false, reset: false)
        try s.syncApplyPull(changes: [put("a", "stale", ["n": 9])], outcomes: [], cursor: "2", more: true, reset: false)
        try s.syncApplyPull(changes: [put("a", "keep", ["n": 2])], outcomes: [], cursor: "r1", more: true, reset: true)
        #expect(try s.syncPullRound() == PullRound(cursor: "r1", reset: true, staged: 1))
        #expect(try s.confirmed("b", "gone") == ["n": 1])
        try s.syncApplyPull(changes: [], outcomes: [], cursor: "r2", more: false, reset: false)
        #expect(try s.confirmed("a", "keep") == ["n": 2])
        #expect(try s.confirmed("a", "stale") == nil)  // the dropped round's page never applied
        #expect(try s.confirmed("b", "gone") == nil)
        #expect(try s.syncCursor() == "r2")
    }

    /// A drop's deletes (a pull reply's `drop`, given as collection-name prefixes): every
    /// confirmed record of the collections under the prefixes, then every other record of
    /// theirs the round in progress staged, each once; nothing of a collection whose name
    /// only starts like the space's.
    @Test func dropDeletesNameTheConfirmedAndStagedRecordsUnderThePrefixes() throws {
        let s = Store()
        try s.syncApplyPull(changes: [put("S/a", "1", [:]), put("S/a", "2", [:]), put("S/$members", "u", [:]), put("Sx", "1", [:]),
                                      put("S", "1", [:]), put("T/a", "1", [:])], outcomes: [], cursor: "1", more: false, reset: false)
        #expect(try s.syncDropDeletes(prefixes: ["S/"]) == [delete("S/$members", "u"), delete("S/a", "1"), delete("S/a", "2")])
        #expect(try s.syncDropDeletes(prefixes: ["Z/"]) == [])
        #expect(try s.syncDropDeletes(prefixes: []) == [])
        // A pending record the server never confirmed is not the drop's to delete.
        try s.mutate([put("S/a", "mine", [:])])
        #expect(try s.syncDropDeletes(prefixes: ["S/"]).count == 3)
        try s.syncApplyPull(changes: [put("S/a", "2", ["n": 2]), put("S/b", "3", [:]), put("T/a", "9", [:]), put("U/a", "1", [:])],
                            outcomes: [], cursor: "2", more: true, reset: false)
        #expect(try s.syncDropDeletes(prefixes: ["S/", "T/"])
                == [delete("S/$members", "u"), delete("S/a", "1"), delete("S/a", "2"), delete("T/a", "1"), delete("S/b", "3"),
                    delete("T/a", "9")])
        // Computing them changes nothing.
        #expect(try s.syncPullRound() == PullRound(cursor: "2", reset: false, staged: 4))
        #expect(try s.confirmed("S/a", "1") == [:])
    }
}
