import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct StoreTests {
    let s = Store()

    @Test func mutateShowsAtOnceAndMarksPending() throws {
        let id = try s.mutate([put("habits", "h1", ["done": true])])
        #expect(try s.get("habits", "h1") == ["done": true])
        #expect(try s.confirmed("habits", "h1") == nil)
        #expect(try s.isPending("habits", "h1"))
        #expect(try s.status(id) == .pending)
        #expect(try s.pendingCount() == 1)
    }

    /// Ids travel as JSON numbers, exact to 2^53 - 1: a store hands out that one and no more
    /// (a clear error, not an overflow), and a snapshot that names a larger id is damaged.
    @Test func idsStopAtTheLargestAJSONNumberCarries() throws {
        let s = try Store(restoring: StoreSnapshot(clientID: "c", nextID: largestMutationID), sink: DiscardingSink())
        let last = try s.mutate([put("c", "k", ["n": 1])])
        #expect(last == largestMutationID)
        #expect(throws: OptimistError.state("this store has handed out every mutation id (up to \(largestMutationID))")) {
            try s.mutate([put("c", "k", ["n": 2])])
        }
        #expect(try s.get("c", "k") == ["n": 1])       // the refused one changed nothing
        try s.commit(last)
        #expect(try s.status(last) == .committed)

        // The state it is in now (the last id live, the next one past the largest) restores;
        // ids past the largest do not.
        let after = try Store(restoring: StoreSnapshot(clientID: "c", nextID: largestMutationID + 1,
                                                       mutations: [MutationRecord(id: largestMutationID, ops: [put("c", "k", [:])])]),
                              sink: DiscardingSink())
        #expect(try after.status(largestMutationID) == .pending)
        #expect(throws: OptimistError.self) { try after.mutate([put("c", "k", ["n": 3])]) }
        for snapshot in [StoreSnapshot(clientID: "c", nextID: largestMutationID + 2),
                         StoreSnapshot(clientID: "c", nextID: .max),
                         StoreSnapshot(clientID: "c", mutations: [MutationRecord(id: largestMutationID + 1, ops: [put("c", "k", [:])])]),
                         StoreSnapshot(clientID: "c", ended: [EndedMutation(id: .max, status: .committed)])] {
            #expect(throws: OptimistError.self) { _ = try Store(restoring: snapshot, sink: DiscardingSink()) }
        }
    }

    @Test func idsIncreaseAndAreNeverReused() throws {
        let a = try s.mutate([put("c", "k", [:])])
        try s.rollback(a)
        let b = try s.mutate([put("c", "k", [:])])
        #expect(b > a)
    }

    @Test func rollingBackTheFirstOfTwoOverlappingMutationsKeepsTheSecond() throws {
        try s.serverApply([put("habits", "h1", ["name": "run", "done": false])])
        let m1 = try s.mutate([patch("habits", "h1", ["done": true])])
        let m2 = try s.mutate([patch("habits", "h1", ["name": "jog"])])
        try s.rollback(m1)
        #expect(try s.get("habits", "h1") == ["name": "jog", "done": false])
        #expect(try s.status(m2) == .pending)
        #expect(try s.isPending("habits", "h1"))
    }

    @Test func incrementsRebaseOnANewServerValue() throws {
        try s.serverApply([put("stats", "d", ["count": 10])])
        try s.mutate([incr("stats", "d", "count", 1)])
        try s.mutate([incr("stats", "d", "count", 1)])
        try s.serverApply([put("stats", "d", ["count": 100])])
        #expect(try s.get("stats", "d") == ["count": 102])
    }

    @Test func commitsInAnyOrder() throws {
        let a = try s.mutate([incr("s", "k", "n", 1)])
        let b = try s.mutate([incr("s", "k", "n", 10)])
        try s.commit(b)
        #expect(try s.confirmed("s", "k") == ["n": 10])
        #expect(try s.get("s", "k") == ["n": 11])
        try s.commit(a)
        #expect(try s.confirmed("s", "k") == ["n": 11])
        #expect(try s.isPending("s", "k") == false)
    }

    @Test func serverResultsWin() throws {
        let a = try s.mutate([incr("s", "k", "n", 1)])
        try s.commit(a, serverOps: [put("s", "k", ["n": 42, "by": "server"])])
        #expect(try s.get("s", "k") == ["n": 42, "by": "server"])
    }

    @Test func deleteRolledBackRestoresTheRecord() throws {
        try s.serverApply([put("h", "k", ["v": 1])])
        let d = try s.mutate([delete("h", "k")])
        #expect(try s.get("h", "k") == nil)
        try s.rollback(d)
        #expect(try s.get("h", "k") == ["v": 1])
    }

    @Test func mutationsAreAtomic() throws {
        try s.serverApply([put("s", "k", ["n": "text"])])
        #expect(throws: OptimistError.self) {
            try s.mutate([put("s", "other", [:]), incr("s", "k", "n", 1)])
        }
        #expect(try s.get("s", "other") == nil)
        #expect(try s.pendingCount() == 0)
        #expect(throws: OptimistError.invalid("incr of k.n: the field is not a number")) {
            try s.serverApply([put("s", "a", [:]), incr("s", "k", "n", 1)])
        }
        #expect(try s.get("s", "a") == nil)
    }

    @Test func opsAppliedInOrderWithinAMutation() throws {
        try s.mutate([put("s", "k", ["n": 1]), incr("s", "k", "n", 2), patch("s", "k", ["x": "y"]), incr("s", "k", "n", 3)])
        #expect(try s.get("s", "k") == ["n": 6, "x": "y"])
    }

    @Test func reapplicationSkipsOnlyTheOpThatNoLongerApplies() throws {
        try s.serverApply([put("s", "k", ["n": 1])])
        let m = try s.mutate([incr("s", "k", "n", 1), patch("s", "k", ["seen": true])])
        try s.serverApply([put("s", "k", ["n": "reset"])])
        #expect(try s.get("s", "k") == ["n": "reset", "seen": true])
        #expect(try s.status(m) == .pending)
        try s.commit(m)
        #expect(try s.confirmed("s", "k") == ["n": "reset", "seen": true])
    }

    @Test func endedMutationsReportState() throws {
        let a = try s.mutate([put("s", "k", [:])])
        try s.commit(a)
        #expect(throws: OptimistError.state("mutation 1 is already committed")) { try s.commit(a) }
        #expect(throws: OptimistError.self) { try s.rollback(a) }
        #expect(try s.status(a) == .committed)
        #expect(throws: OptimistError.notFound("no mutation 99")) { try s.commit(99) }
    }

    @Test func duplicateDedupeKeyChangesNothing() throws {
        let a = try s.mutate([incr("h", "k", "n", 1)], dedupeKey: "tap")
        #expect(throws: OptimistError.duplicate(existing: a)) {
            try s.mutate([incr("h", "k", "n", 1)], dedupeKey: "tap")
        }
        #expect(try s.get("h", "k") == ["n": 1])
        try s.rollback(a)
        let b = try s.mutate([incr("h", "k", "n", 1)], dedupeKey: "tap")
        #expect(b > a)
    }

    @Test func emptyMutationIsMisuse() {
        #expect(throws: OptimistError.misuse("a mutation needs at least one op")) { try s.mutate([]) }
    }

    @Test func scanIsKeyOrderedWithPrefixAndLimit() throws {
        for k in ["2026-01-10", "2026-01-02", "2025-12-31", "2026-02-01", "2026-01-01"] {
            try s.mutate([put("logs", Key(k), ["k": .string(k)])])
        }
        try s.mutate([delete("logs", "2026-01-02")])
        #expect(try s.scan("logs", prefix: "2026-01").map(\.key.string) == ["2026-01-01", "2026-01-10"])
        #expect(try s.scan("logs", limit: 2).map(\.key.string) == ["2025-12-31", "2026-01-01"])
        try s.mutate([put("logs", "2026-01-02", [:]), put("logs", "2026-01-05", [:])])
        #expect(try s.scan("logs", prefix: "2026-01").map(\.key.string) == ["2026-01-01", "2026-01-02", "2026-01-05", "2026-01-10"])
        #expect(try s.scan("nothing").isEmpty)
    }

    @Test func keysCompareAsBytes() throws {
        try s.mutate([put("c", "e\u{301}", ["v": 1]), put("c", "é", ["v": 2])])
        #expect(try s.get("c", "e\u{301}") == ["v": 1])
        #expect(try s.get("c", "é") == ["v": 2])
        #expect(try s.scan("c").count == 2)
    }

    @Test func clientIDIsAUUID() {
        let id = s.clientID
        #expect(id.count == 36)
        #expect(Array(id)[14] == "4")
        #expect(Store().clientID != id)
    }

    @Test func closedStoreRefusesCalls() throws {
        try s.close()
        try s.close()
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.get("c", "k") }
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.mutate([put("c", "k", [:])]) }
    }
}

/// A journal sink that keeps nothing: for stores restored from a snapshot in memory.
final class DiscardingSink: JournalSink {
    func append(_ entries: [JournalEntry], number: UInt64) {}
    func flush() throws(OptimistError) {}
    func close() throws(OptimistError) {}
    func takeError() -> OptimistError? { nil }
}

/// A journal sink that records each append's number and entry count.
final class NumberingSink: JournalSink, @unchecked Sendable {
    private let lock = NSLockLike()
    private var seen: [(number: UInt64, count: Int)] = []
    var appends: [(number: UInt64, count: Int)] { lock.withLock { seen } }
    func append(_ entries: [JournalEntry], number: UInt64) { lock.withLock { seen.append((number, entries.count)) } }
    func flush() throws(OptimistError) {}
    func close() throws(OptimistError) {}
    func takeError() -> OptimistError? { nil }
}

/// The storage names every journal append (``ConfirmedStorage/sealAppend()``) and the store
/// hands that number to the sink: one per change that journals something, in order from 1;
/// reads and refused changes append nothing and take no number.
@Suite struct AppendNumberTests {
    @Test func everyJournalingChangeTakesTheNextNumber() throws {
        let sink = NumberingSink()
        let s = try Store(restoring: StoreSnapshot(clientID: "c"), sink: sink)
        let a = try s.mutate([put("c", "a", ["n": 1, "t": "text"])])
        _ = try s.get("c", "a")
        #expect(throws: OptimistError.self) { try s.mutate([incr("c", "a", "t", 1)]) }   // not a number
        try s.commit(a)
        try s.serverApply([put("c", "z", ["n": 2])])
        let numbers = sink.appends.map(\.number)
        #expect(numbers == Array(1...UInt64(numbers.count)))
        #expect(numbers.count == 3)
        #expect(sink.appends.allSatisfy { $0.count > 0 })
    }
}
