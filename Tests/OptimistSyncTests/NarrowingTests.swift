import Synchronization
import Testing
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistProtocol

/// A server that refuses a whole push with an HTTP status (and a JSON error body) whenever
/// the push carries a mutation with an op on a poisoned collection, as a server with a small
/// body limit or a strict parser does; every other request goes to a ``FakeServer``. It
/// records the ids of every push it is sent, refused or not.
final class RefusingServer: SyncTransport, @unchecked Sendable {
    let inner: FakeServer
    let status: Int
    let error: String
    let poisoned: String
    private let lock = Mutex<[[MutationID]]>([])

    init(_ inner: FakeServer, status: Int, error: String, poisoned: String) {
        self.inner = inner
        self.status = status
        self.error = error
        self.poisoned = poisoned
    }

    var pushes: [[MutationID]] { lock.withLock { $0 } }

    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        guard request.endpoint == .push, case .object(let o)? = try? JSONParser.parse(request.body),
              case .array(let ms)? = o["mutations"] else { return inner.send(request, cancelled: cancelled) }
        lock.withLock { $0.append(ms.compactMap { $0.object?["id"]?.number }.map { MutationID($0) }) }
        let poisonous = ms.contains { m in
            guard case .array(let ops)? = m.object?["ops"] else { return false }
            return ops.contains { $0.object?["coll"] == .string(poisoned) }
        }
        if poisonous { return .http(status: status, body: JSONWriter.string(["error": .string(error)]), retryAfterMs: nil) }
        return inner.send(request, cancelled: cancelled)
    }
}

/// Narrowing: a push refused whole for its content (400, 413, 422) is split until the one
/// mutation the server will not take is found; that one ends `rejected` with the server's
/// reason, the rest go through.
@Suite struct NarrowingTests {
    func machine(_ store: Store, _ transport: any SyncTransport, maxBatch: Int = 100) throws -> SyncMachine {
        let o = try SyncOptions(url: "http://test", transport: transport, pullIntervalMs: 0, maxBatch: maxBatch,
                                backoffBaseMs: 100, backoffMaxMs: 2_000).validated()
        let m = SyncMachine(store: store, transport: transport, options: o, seed: 7)
        try m.begin()
        return m
    }

    /// Steps the machine through its waits (each at the time it asked for) until it waits for
    /// nothing but a wake-up, or `rounds` waits have passed.
    func settle(_ m: SyncMachine, from now: Int64 = 0, rounds: Int = 50) {
        var now = now
        for _ in 0..<rounds {
            guard let until = drain(m, now: now)?.until else { return }
            now = max(now + 1, until)
        }
    }

    @Test func onePoisonousMutationAmongTwentyAloneEndsRejected() throws {
        let store = Store(), fake = FakeServer()
        let server = RefusingServer(fake, status: 400, error: "ops: invalid JSON at byte 9", poisoned: "poison")
        var ordinary = [MutationID]()
        for i in 0..<7 { ordinary.append(try store.mutate([put("logs", Key("k\(i)"), ["n": .number(Double(i))])])) }
        let poison = try store.mutate([put("poison", "p", ["x": 1])])
        for i in 7..<20 { ordinary.append(try store.mutate([put("logs", Key("k\(i)"), ["n": .number(Double(i))])])) }
        let m = try machine(store, server)
        settle(m)
        // The 20 arrive, in id order, each once.
        #expect(fake.applied[store.clientID] == ordinary)
        for id in ordinary { #expect(try store.status(id) == .committed) }
        // The poisonous one alone ends rejected (its policy: rolled back), with the server's reason.
        #expect(try store.status(poison) == .rolledBack)
        #expect(try store.get("poison", "p") == nil)
        #expect(try store.pendingCount() == 0)
        #expect(m.status().failed == 0)
        #expect(m.isIdle())
        // It was sent alone before it was rejected.
        #expect(server.pushes.contains([poison]))
    }

    @Test func aRejectionByNarrowingKeepsTheServersReasonAsTheLastError() throws {
        let store = Store(), fake = FakeServer()
        let server = RefusingServer(fake, status: 413, error: "the request body is over 65536 bytes", poisoned: "big")
        let big = try store.mutate([put("big", "b", ["text": "large"])], policy: .keep)
        let after = try store.mutate([put("logs", "a", ["n": 1])])
        let m = try machine(store, server)
        settle(m)
        // Policy keep: failed, still visible, the server's error text as its last error.
        #expect(try store.status(big) == .failed)
        #expect(try store.mutation(big).lastError == "the request body is over 65536 bytes")
        #expect(try store.get("big", "b") == ["text": "large"])
        #expect(try store.status(after) == .committed)
        #expect(fake.applied[store.clientID] == [after])
    }

    @Test func aWholeBatchRefusedWith400IsHalvedDownToOneThenGrowsBack() throws {
        let store = Store(), fake = FakeServer()
        let server = RefusingServer(fake, status: 400, error: "bad request", poisoned: "poison")
        let poison = try store.mutate([put("poison", "p", [:])])
        var ids = [MutationID]()
        for i in 0..<7 { ids.append(try store.mutate([put("q", Key("k\(i)"), [:])])) }
        let m = try machine(store, server, maxBatch: 8)
        settle(m)
        // 8 refused, 4 refused, 2 refused, the poison alone: rejected; then 2, 4, and the last 1.
        #expect(server.pushes.map(\.count) == [8, 4, 2, 1, 2, 4, 1])
        #expect(try store.status(poison) == .rolledBack)
        #expect(fake.applied[store.clientID] == ids)
        // After successes the batch is back at max_batch.
        for i in 0..<8 { try store.mutate([put("r", Key("k\(i)"), [:])]) }
        settle(m, from: 1_000_000)
        #expect(server.pushes.last?.count == 8)
        #expect(try store.pendingCount() == 0)
    }

    /// Statuses that say the endpoint or the headers are wrong (every request shares them) or
    /// that ask to wait: never narrowed into rejections; the mutation stays queued.
    @Test(arguments: [404, 405, 408, 415, 429, 431, 500, 503])
    func aStatusThatIsNotAboutTheContentRejectsNothing(status: Int) throws {
        let store = Store(), fake = FakeServer()
        let server = RefusingServer(fake, status: status, error: "no", poisoned: "q")
        let id = try store.mutate([put("q", "a", [:])])
        let m = try machine(store, server)
        settle(m, rounds: 5)
        #expect(try store.status(id) == .pending)
        #expect(m.state == .error || m.state == .backoff)
        #expect(m.lastError?.contains("HTTP \(status)") == true)
        #expect(fake.applied[store.clientID] == nil)
    }

    @Test func aPullNamesTheDigestOfEachUnackedMutationsOps() throws {
        let store = Store(), fake = FakeServer()
        let m = try machine(store, fake)
        drain(m, now: 0)   // the pull at start
        let a = try store.mutate([put("q", "a", ["v": 1]), incr("q", "n", "c", 2)])
        let b = try store.mutate([.delete(collection: "q", key: "z")])
        let expected = [try store.mutation(a).ops, try store.mutation(b).ops].map(OpsDigest.of)
        fake.faults = [.loseAnswer]
        let w = drain(m, now: 1)
        let before = fake.requestCount
        drain(m, now: w?.until ?? 10_000)
        let pull = fake.requests[before]
        #expect(pull.endpoint == .pull)
        let request = try PullRequest.decode(try JSONParser.parse(pull.body))
        #expect(request.unacked == [a, b])
        #expect(request.digests == expected)
        #expect(request.digests == [OpsDigest.of([put("q", "a", ["v": 1]), incr("q", "n", "c", 2)]),
                                    OpsDigest.of([.delete(collection: "q", key: "z")])])
    }
}
