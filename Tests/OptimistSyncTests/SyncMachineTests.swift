import Testing
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistSync
import OptimistOpen

/// The sync's rules, driven step by step with a fake clock and an in-test server: no
/// threads, no sleeping.
@Suite struct SyncMachineTests {
    func machine(_ store: Store, _ server: FakeServer, maxBatch: Int = 100, interval: Int64 = 0,
                 maxResponseBytes: Int = 64 << 20) throws -> SyncMachine {
        let o = try SyncOptions(url: "http://test", transport: server, pullIntervalMs: interval, maxBatch: maxBatch,
                                backoffBaseMs: 100, backoffMaxMs: 2_000, maxResponseBytes: maxResponseBytes).validated()
        let m = SyncMachine(store: store, transport: server, options: o, seed: 42)
        try m.begin()
        return m
    }

    func pushedIDs(_ server: FakeServer) -> [[MutationID]] {
        server.requests.filter { $0.endpoint == .push }.map { r in
            guard case .object(let o)? = try? JSONParser.parse(r.body), case .array(let ms)? = o["mutations"] else { return [] }
            return ms.compactMap { $0.object?["id"]?.number }.map { MutationID($0) }
        }
    }

    @Test func pushesInIdOrderInBatchesAndCommits() throws {
        let store = Store(), server = FakeServer()
        var ids = [MutationID]()
        for i in 0..<250 { ids.append(try store.mutate([put("logs", Key("k\(i)"), ["n": .number(Double(i))])])) }
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(pushedIDs(server).map(\.count) == [100, 100, 50])
        #expect(pushedIDs(server).flatMap { $0 } == ids)
        #expect(server.applied[store.clientID] == ids)
        for id in ids { #expect(try store.status(id) == .committed) }
        #expect(try store.confirmed("logs", "k7") == ["n": 7])
        #expect(try store.pendingCount() == 0)
        #expect(m.isIdle())
        #expect(m.status().pushed == 250)
        // The first request is the pull at start; one pull follows the pushes.
        #expect(server.requests.first?.endpoint == .pull)
        #expect(server.requests.last?.endpoint == .pull)
    }

    @Test func pullBringsServerChangesAndRebasesPending() throws {
        let store = Store(), server = FakeServer()
        server.serverApply([put("habits", "run", ["count": 5])])
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(try store.confirmed("habits", "run") == ["count": 5])
        #expect(try store.syncCursor() == "1")
        // A local incr on top, then another device's change: the incr rebases, never lost.
        try store.mutate([incr("habits", "run", "count", 1)])
        server.serverApply([put("habits", "run", ["count": 10])])
        drain(m, now: 1)
        #expect(try store.get("habits", "run") == ["count": 11])
        #expect(server.value("habits", "run") == ["count": 11])
        #expect(try store.pendingCount() == 0)
    }

    @Test func aLostAnswerIsResolvedByThePullWithoutCountingTwice() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)   // the pull at start
        let id = try store.mutate([incr("stats", "taps", "n", 1)])
        server.faults = [.loseAnswer]
        let w = drain(m, now: 10)
        #expect(m.state == .offline)
        #expect(try store.status(id) == .pending)      // back in the queue, nothing lost
        #expect(server.applied[store.clientID] == [id])  // but the server applied it
        let before = server.requestCount
        drain(m, now: w?.until ?? 10_000)
        // The next exchange is a pull naming the id as unacked; its outcome ends the mutation
        // without folding the incr again, and nothing is re-sent.
        #expect(server.requests[before].endpoint == .pull)
        #expect(server.requests[before].body.contains("\"unacked\":[\(id)]"))
        #expect(try store.status(id) == .committed)
        #expect(try store.get("stats", "taps") == ["n": 1])
        #expect(try store.confirmed("stats", "taps") == ["n": 1])
        #expect(server.applied[store.clientID] == [id])
        #expect(!server.requests[before...].contains { $0.endpoint == .push })
    }

    @Test func aRejectedMutationFollowsItsPolicyAndKeepsTheServersError() throws {
        let store = Store(), server = FakeServer()
        server.refuse = ["locked"]
        let a = try store.mutate([put("locked", "a", ["v": 1])])
        let b = try store.mutate([put("locked", "b", ["v": 2])], policy: .keep)
        let c = try store.mutate([put("open", "c", ["v": 3])])
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(try store.status(a) == .rolledBack)
        #expect(try store.get("locked", "a") == nil)
        #expect(try store.status(b) == .failed)
        #expect(try store.mutation(b).lastError == "refused")
        #expect(try store.get("locked", "b") == ["v": 2])   // kept visible
        #expect(try store.status(c) == .committed)          // not blocked by the failed one
        // Retried after the refusal is lifted: sent again with retry 1 and applied.
        server.refuse = []
        try store.retry(b)
        drain(m, now: 1)
        #expect(try store.status(b) == .committed)
        let last = server.requests.last { $0.endpoint == .push }.flatMap { try? JSONParser.parse($0.body) }
        let sent = last?.object?["mutations"].flatMap { if case .array(let a) = $0 { a.first?.object } else { nil } }
        #expect(sent?["id"]?.number == Double(b))
        #expect(sent?["retry"]?.number == 1)
    }

    @Test func retryAfterIsHonouredAndBlocksLaterMutations() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        let a = try store.mutate([put("q", "a", [:])])
        let b = try store.mutate([put("q", "b", [:])])
        server.retryOnce = [a]
        let w = drain(m, now: 1_000)
        #expect(try store.status(a) == .pending)
        #expect(try store.status(b) == .pending)       // left out: the server stopped at a's retry
        #expect(try store.mutation(a).attempts == 1)
        #expect(try store.mutation(b).attempts == 0)   // not processed: no attempt counted
        #expect(w?.until == 1_250)
        let sent = server.requestCount
        #expect(m.step(now: 1_249) == SyncMachine.Wait(until: 1_250))
        #expect(server.requestCount == sent)           // b does not overtake a
        drain(m, now: 1_250)
        #expect(pushedIDs(server).last == [a, b])
        #expect(try store.status(a) == .committed && store.status(b) == .committed)
    }

    @Test func unauthorizedPausesUntilNewHeaders() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        let a = try store.mutate([put("q", "a", [:])])
        server.faults = [.status(401, retryAfterMs: nil)]
        drain(m, now: 5)
        #expect(m.state == .unauthorized)
        let sent = server.requestCount
        #expect(m.step(now: 1_000_000) == SyncMachine.Wait(until: nil))
        #expect(server.requestCount == sent)
        #expect(try store.status(a) == .pending)       // nothing rolled back
        m.setHeaders([SyncHeader("Authorization", "Bearer fresh")])
        drain(m, now: 1_000_001)
        #expect(try store.status(a) == .committed)
        #expect(server.requests.last?.headers == [SyncHeader("Authorization", "Bearer fresh")])
    }

    @Test(arguments: [
        "not json at all",
        "{}",
        #"{"results": 5}"#,
        #"{"results": [{"id": 999, "status": "ok"}]}"#,
        #"{"results": [{"id": 1, "status": "maybe"}]}"#,
        #"{"results": [{"id": 1, "status": "ok", "ops": [{"op": "explode"}]}]}"#,
        #"{"results": [{"id": 1, "status": "ok"}, {"id": 1, "status": "ok"}]}"#,
        #"[1, 2, 3]"#,
    ])
    func aBodyThatIsNotTheProtocolChangesNothing(body: String) throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        let id = try store.mutate([incr("s", "k", "n", 1)])
        #expect(id == 1)
        server.faults = [.body(body)]
        let w = drain(m, now: 10)
        #expect(m.state == .error)
        #expect(m.lastError?.isEmpty == false)
        #expect(try store.status(id) == .pending)
        #expect(try store.get("s", "k") == ["n": 1])
        #expect(try store.confirmed("s", "k") == nil)
        drain(m, now: w?.until ?? 100_000)
        #expect(try store.status(id) == .committed)
        #expect(try store.confirmed("s", "k") == ["n": 1])
        #expect(server.applied[store.clientID] == [id])
    }

    @Test func aHugeBodyIsRefusedWhole() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server, maxResponseBytes: 4_096)
        drain(m, now: 0)
        try store.mutate([put("s", "k", [:])])
        server.faults = [.body(#"{"results": [], "pad": ""# + String(repeating: "x", count: 10_000) + #""}"#)]
        drain(m, now: 1)
        #expect(m.state == .error)
        #expect(m.lastError?.contains("over the limit") == true)
        #expect(try store.pendingCount() == 1)
    }

    @Test func backoffGrowsWithJitterUpToItsCapAndSyncNowCutsIt() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        try store.mutate([put("s", "k", [:])])
        var now: Int64 = 0
        var waits = [Int64]()
        for _ in 0..<12 {
            server.faults = [.unreachable]
            guard let until = drain(m, now: now)?.until else { Issue.record("no wait"); return }
            waits.append(until - now)
            now = until
        }
        #expect(m.state == .offline)
        // base 100 ms doubling, equal jitter (half to all), capped at 2 s.
        for (i, w) in waits.enumerated() {
            let full = min(2_000, 100 << Int64(i))
            #expect(w >= full / 2 && w <= full, "wait \(i): \(w) ms")
        }
        #expect(waits.suffix(4).allSatisfy { $0 <= 2_000 && $0 >= 1_000 })
        #expect(try store.pendingCount() == 1)
        m.wakeNow()
        drain(m, now: now + 1)
        #expect(try store.pendingCount() == 0)
    }

    @Test func overloadedServerBacksOffHonouringRetryAfter() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        try store.mutate([put("s", "k", [:])])
        server.faults = [.status(503, retryAfterMs: 7_000)]
        let w = drain(m, now: 100)
        #expect(m.state == .backoff)
        #expect((w?.until ?? 0) >= 7_100)
        server.faults = [.status(418, retryAfterMs: nil)]
        let w2 = drain(m, now: w?.until ?? 0)
        #expect(m.state == .error)
        drain(m, now: w2?.until ?? 0)
        #expect(try store.pendingCount() == 0)
    }

    @Test func tooLargeAPushHalvesTheBatch() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server, maxBatch: 8)
        drain(m, now: 0)
        for i in 0..<8 { try store.mutate([put("s", Key("k\(i)"), [:])]) }
        server.faults = [.status(413, retryAfterMs: nil)]
        let w = drain(m, now: 1)
        drain(m, now: w?.until ?? 0)
        #expect(pushedIDs(server).map(\.count).prefix(2) == [8, 4])
        #expect(try store.pendingCount() == 0)
    }

    @Test func theSyncsStatusChangesReachSubscribers() throws {
        let store = Store(), server = FakeServer()
        let log = ChangeLog()
        try store.subscribe { log.append($0) }
        let m = try machine(store, server)
        drain(m, now: 0)
        try store.mutate([put("q", "a", ["v": 1])], policy: .keep)
        server.refuse = ["q"]
        drain(m, now: 1)
        let causes = log.all.flatMap { $0 }.map { "\($0.cause)/\($0.status)" }
        // mutate (pending), sent (sync, still pending), rejected and kept (fail, failed)
        #expect(causes == ["mutate/pending", "sync/pending", "fail/failed"])
        server.refuse = []
        let id = try store.pendingCount() == 1 ? MutationID(1) : 0
        try store.retry(id)
        drain(m, now: 2)
        let tail = log.all.flatMap { $0 }.suffix(3).map { "\($0.cause)/\($0.status)" }
        #expect(tail == ["retry/pending", "sync/pending", "commit/confirmed"])
    }

    @Test func aRetriedFailedMutationIsSentAfterEverythingAlreadyQueued() throws {
        let store = Store(), server = FakeServer()
        let m = try machine(store, server)
        drain(m, now: 0)
        server.refuse = ["x"]
        let f = try store.mutate([put("x", "f", [:])], policy: .keep)
        drain(m, now: 1)
        #expect(try store.status(f) == .failed)
        server.refuse = []
        let a = try store.mutate([put("q", "a", [:])])
        try store.retry(f)
        let b = try store.mutate([put("q", "b", [:])])
        drain(m, now: 2)
        #expect(pushedIDs(server).last == [a, f, b])
        #expect(server.applied[store.clientID] == [a, f, b])
    }

    @Test func theCursorPersistsWithTheStoreFile() throws {
        let dir = TempDir()
        let path = dir.file("cursor.optimist")
        let server = FakeServer()
        server.serverApply([put("c", "k", ["v": 1]), put("c", "j", ["v": 2])])
        do {
            let store = try Store.open(path: path)
            let m = try machine(store, server)
            drain(m, now: 0)
            #expect(try store.syncCursor() == "2")
            try store.close()
        }
        let store = try Store.open(path: path)
        #expect(try store.syncCursor() == "2")
        #expect(try store.confirmed("c", "j") == ["v": 2])
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(server.requests.last?.body.contains(#""cursor":"2""#) == true)
        try store.close()
    }

    @Test func pagesArePulledUntilTheServerHasNoMore() throws {
        let store = Store(), server = FakeServer()
        server.pageSize = 10
        server.serverApply((0..<35).map { put("bulk", Key("k\($0)"), ["i": .number(Double($0))]) })
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(try store.scan("bulk").count == 35)
        #expect(server.requests.filter { $0.endpoint == .pull }.count == 4)
        #expect(m.status().pulled == 35)
    }

    @Test func aServerAssignedKeyMovesTheRecordAndItsPendingEdits() throws {
        let store = Store(), server = FakeServer()
        server.assignKeys = true
        let log = ChangeLog()
        try store.subscribe(collection: "notes") { log.append($0) }
        let m = try machine(store, server, maxBatch: 1)
        drain(m, now: 0)
        let a = try store.mutate([put("notes", "tmp-1", ["text": "hi"])])
        let b = try store.mutate([.patch(collection: "notes", key: "tmp-1", value: ["done": true])])
        // One push at a time: a's answer renames tmp-1 before b is sent.
        _ = m.step(now: 1)
        #expect(try store.status(a) == .committed)
        #expect(try store.get("notes", "tmp-1") == nil)
        #expect(try store.get("notes", "srv-1") == ["text": "hi", "done": true])   // b's edit moved along
        #expect(try store.isPending("notes", "srv-1"))
        #expect(try store.mutation(b).ops == [.patch(collection: "notes", key: "srv-1", value: ["done": true])])
        drain(m, now: 2)
        #expect(try store.status(b) == .committed)
        #expect(server.value("notes", "srv-1") == ["text": "hi", "done": true])
        #expect(try store.confirmed("notes", "srv-1") == ["text": "hi", "done": true])
        let seen = log.all.flatMap { $0 }.filter { $0.cause == .commit }.map { "\($0.key)=\($0.value == nil ? "gone" : "here")" }
        #expect(seen.prefix(2) == ["tmp-1=gone", "srv-1=here"])
    }
}
