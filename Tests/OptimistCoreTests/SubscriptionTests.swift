import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct SubscriptionTests {
    let s = Store()

    @Test func batchesPerCallWithCausesAndFilters() throws {
        let all = ChangeLog(), habits = ChangeLog()
        try s.subscribe { all.append($0) }
        let sub = try s.subscribe(collection: "habits", prefix: "h1") { habits.append($0) }
        let a = try s.mutate([put("habits", "h1", ["d": 1]), put("habits", "h2", ["d": 2]), put("x", "h1", [:])])
        #expect(all.all.count == 1 && all.all[0].count == 3)
        #expect(habits.all == [[Change(collection: "habits", key: "h1", value: ["d": 1], pending: true, cause: .mutate)]])
        try s.commit(a)
        #expect(habits.all.last == [Change(collection: "habits", key: "h1", value: ["d": 1], pending: false, cause: .commit)])
        // A call that changes nothing visible notifies nobody.
        try s.serverApply([put("habits", "h1", ["d": 1])])
        #expect(habits.all.count == 2)
        try s.unsubscribe(sub)
        #expect(throws: OptimistError.notFound("no subscription \(sub)")) { try s.unsubscribe(sub) }
        try s.serverApply([put("habits", "h1", ["d": 5])])
        #expect(habits.all.count == 2)
        #expect(all.all.last?.first?.cause == .server)
    }

    @Test func failureCauseWhenPolicyRollsBack() throws {
        let log = ChangeLog()
        try s.subscribe { log.append($0) }
        let a = try s.mutate([put("q", "k", [:])])
        try s.fail(a, transient: false, now: 0)
        #expect(log.all.last == [Change(collection: "q", key: "k", value: nil, pending: false, cause: .fail)])
    }

    @Test func listenersMayReadAndMutateTheStore() throws {
        let s = self.s
        let seen = ChangeLog()
        try s.subscribe(collection: "habits") { changes in
            // Runs outside the lock: reading and mutating must not deadlock.
            guard changes.first?.cause == .mutate, let v = try? s.get("habits", changes[0].key) else { return }
            seen.append([Change(collection: "read", key: changes[0].key, value: v, pending: true, cause: .mutate)])
            _ = try? s.mutate([incr("counters", "writes", "n", 1)])
        }
        try s.mutate([put("habits", "h1", ["d": 1])])
        try s.mutate([put("habits", "h2", ["d": 1])])
        #expect(seen.all.count == 2)
        #expect(try s.get("counters", "writes") == ["n": 2])
    }

    @Test func asyncSequenceOfChanges() async throws {
        let stream = try s.changes(collection: "habits")
        try s.mutate([put("habits", "h1", ["d": 1])])
        try s.mutate([put("other", "h1", ["d": 1])])
        try s.mutate([put("habits", "h2", ["d": 2])])
        var got = [Key]()
        for await batch in stream {
            got += batch.map(\.key)
            if got.count == 2 { break }
        }
        #expect(got == ["h1", "h2"])
    }
}
