import Testing
@testable import OptimistCore
@testable import OptimistModel

/// Status you can see: `mutations(status:)` lists the not-yet-ended mutations as the store
/// keeps them, and `explain` shows a record's layers folded by the rule of the visible state.
@Suite struct StatusTests {
    let s = Store()

    @Test func mutationsListsTheLiveOnesInIdOrderWithEverythingKept() throws {
        s.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 100)
        let a = try s.mutate([incr("h", "run", "n", 1), put("h", "x", [:])], dedupeKey: "tap-1")
        let b = try s.mutate([patch("h", "run", ["note": "am"])], policy: .keep)
        let c = try s.mutate([delete("h", "gone")])
        let d = try s.mutate([put("h", "y", [:])])
        try s.commit(d)
        _ = try s.outboxNext(now: 1_000)                      // a: inflight, then back off
        try s.fail(a, transient: true, reason: "timeout", now: 1_000)
        _ = try s.outboxNext(now: 1_000)                      // b: fails for good, kept
        try s.fail(b, transient: false, reason: "rejected", now: 1_000)
        _ = try s.outboxNext(now: 1_000)                      // c: inflight

        let all = try s.mutations()
        #expect(all.map(\.id) == [a, b, c])
        #expect(all.map(\.status) == [.pending, .failed, .inflight])
        #expect(all[0].ops == [incr("h", "run", "n", 1), put("h", "x", [:])])
        #expect(all[0].dedupeKey == "tap-1" && all[0].attempts == 1 && all[0].lastError == "timeout")
        #expect(all[0].nextAttemptAt >= 1_050 && all[0].nextAttemptAt <= 1_100)
        #expect(all[1].policy == .keep && all[1].lastError == "rejected" && all[1].retry == 0)
        #expect(all == [try s.mutation(a), try s.mutation(b), try s.mutation(c)])

        #expect(try s.mutations(status: .pending).map(\.id) == [a])
        #expect(try s.mutations(status: .failed).map(\.id) == [b])
        #expect(try s.mutations(status: .inflight).map(\.id) == [c])
        try s.retry(b)
        #expect(try s.mutations(status: .pending).map(\.id) == [a, b])
        #expect(try s.mutation(b).retry == 1)
    }

    @Test func endedStatusesAreMisuseAndAnEmptyStoreListsNothing() throws {
        #expect(try s.mutations().isEmpty)
        for st in [MutationStatus.committed, .rolledBack] {
            #expect(throws: OptimistError.self) { try s.mutations(status: st) }
        }
        try s.close()
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.mutations() }
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.explain("h", "k") }
    }

    @Test func explainShowsEachLayerAndTheVisibleValue() throws {
        try s.serverApply([put("h", "run", ["n": 1, "t": "Run"])])
        let a = try s.mutate([incr("h", "run", "n", 1), put("h", "other", [:])])
        let b = try s.mutate([patch("h", "run", ["note": "am"]), incr("h", "run", "n", 10)], policy: .keep)
        let c = try s.mutate([put("h", "elsewhere", [:])])
        let d = try s.mutate([delete("h", "run")])
        let x = try s.explain("h", "run")
        #expect(x.confirmed == ["n": 1, "t": "Run"])
        #expect(x.layers.map(\.id) == [a, b, d])      // c does not touch the record
        #expect(x.layers[0].ops == [incr("h", "run", "n", 1)])   // only its ops on this record
        #expect(x.layers[0].value == ["n": 2, "t": "Run"])
        #expect(x.layers[1].ops.count == 2 && x.layers[1].value == ["n": 12, "t": "Run", "note": "am"])
        #expect(x.layers[2].value == nil && x.layers[2].status == .pending)
        #expect(try x.visible == nil && x.visible == s.get("h", "run"))
        #expect(x.layers.allSatisfy { $0.skipped.isEmpty })
        _ = c
        try s.rollback(d)
        #expect(try s.explain("h", "run").visible == ["n": 12, "t": "Run", "note": "am"])
    }

    @Test func anOpThatNoLongerAppliesIsSkippedAsInTheVisibleState() throws {
        try s.serverApply([put("h", "k", ["n": 1])])
        let a = try s.mutate([incr("h", "k", "n", 1)])
        let b = try s.mutate([patch("h", "k", ["m": true])])
        try s.serverApply([put("h", "k", ["n": "text"])])
        let x = try s.explain("h", "k")
        #expect(x.confirmed == ["n": "text"])
        #expect(x.layers.map(\.id) == [a, b])
        #expect(x.layers[0].skipped == [0] && x.layers[0].value == ["n": "text"])
        #expect(x.layers[1].skipped.isEmpty && x.layers[1].value == ["n": "text", "m": true])
        #expect(try x.visible == s.get("h", "k"))
    }

    @Test func aRecordNothingKnowsOfExplainsAsEmpty() throws {
        #expect(try s.explain("nowhere", "k") == Explanation(collection: "nowhere", key: "k", confirmed: nil, layers: [], visible: nil))
        try s.serverApply([put("h", "k", ["v": 1])])
        let x = try s.explain("h", "k")
        #expect(x.layers.isEmpty && x.confirmed == ["v": 1] && x.visible == ["v": 1])
    }

    @Test func explainAgreesWithTheVisibleStateUnderRandomCalls() throws {
        var rng = SeededRandom(seed: 20_251_122)
        let keys: [Key] = ["a", "b", "c"]
        var ids: [MutationID] = []
        func op() -> Op {
            let k = keys.randomElement(using: &rng)!
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: return put("h", k, ["n": .number(Double(Int.random(in: 0..<5, using: &rng)))])
            case 1: return patch("h", k, ["s": Bool.random(using: &rng) ? "x" : .null])
            case 2: return delete("h", k)
            case 3: return put("h", k, ["n": "text"])
            default: return incr("h", k, "n", 1)
            }
        }
        for _ in 0..<400 {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0, 1, 2:
                if let id = try? s.mutate([op(), op()], policy: Bool.random(using: &rng) ? .keep : .rollback) { ids.append(id) }
            case 3: if let id = ids.randomElement(using: &rng) { try? s.commit(id) }
            case 4: if let id = ids.randomElement(using: &rng) { try? s.rollback(id) }
            default: try? s.serverApply([op()])
            }
            let live = try s.mutations()
            for k in keys {
                let x = try s.explain("h", k)
                #expect(try x.visible == s.get("h", k))
                #expect((x.layers.isEmpty ? x.confirmed : x.layers[x.layers.count - 1].value) == x.visible)
                #expect(try x.confirmed == s.confirmed("h", k))
                #expect(x.layers.map(\.id) == live.filter { $0.ops.contains { $0.key == k } }.map(\.id))
                #expect(try !x.layers.isEmpty == s.isPending("h", k))
            }
        }
    }

    @Test func jsonFormsAreTheOnesHostsSee() throws {
        let a = try s.mutate([incr("h", "k", "n", 1)], dedupeKey: "d")
        try s.retry(a)   // due at once, whatever the clock: reads as 0
        let m = try s.mutation(a)
        #expect(m.nextAttemptAt == Int64.min)
        #expect(JSONWriter.string(m.json) == """
            {"attempts":0,"created_ms":null,"dedupe_key":"d","id":\(a),"last_error":null,"next_attempt_ms":0,\
            "ops":[{"coll":"h","delta":1,"field":"n","key":"k","op":"incr"}],"policy":"rollback","retry":0,"status":"pending"}
            """)
        #expect(JSONWriter.string(try s.explain("h", "k").json) == """
            {"confirmed":null,"layers":[{"id":\(a),"ops":[{"coll":"h","delta":1,"field":"n","key":"k","op":"incr"}],\
            "status":"pending","value":{"n":1}}],"visible":{"n":1}}
            """)
        #expect(MutationRecord.exactInJSON(Int64.max) == (1 << 53) - 1)
        #expect(MutationRecord.exactInJSON(-5) == -5)
    }
}
