import Testing
import Synchronization
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistSync
import OptimistOpen
#if canImport(Glibc)
import Glibc
#endif

/// The sync on its own thread: started from the store, fed by mutations from other threads,
/// stopped or closed while a request is in progress.
@Suite struct SyncRunnerTests {
    func options(_ server: FakeServer) -> SyncOptions {
        SyncOptions(transport: server, pullIntervalMs: 0, maxBatch: 25, backoffBaseMs: 5, backoffMaxMs: 50)
    }

    @Test func mutationsFromManyThreadsAllReachTheServerOnce() throws {
        let store = Store(), server = FakeServer()
        try store.startSync(options(server))
        let threads = 4, each = 100
        let done = Atomic<Int>(0)
        for t in 0..<threads {
            _ = spawn {
                for i in 0..<each {
                    _ = try? store.mutate([incr("totals", "all", "n", 1), put("log", Key("t\(t)-\(i)"), [:])])
                }
                done.add(1, ordering: .sequentiallyConsistent)
            }
        }
        while done.load(ordering: .sequentiallyConsistent) < threads { usleep(1_000) }
        #expect(try store.waitForSyncIdle(timeoutMs: 30_000))
        #expect(server.value("totals", "all") == ["n": .number(Double(threads * each))])
        #expect(try store.confirmed("totals", "all") == ["n": .number(Double(threads * each))])
        let applied = server.applied[store.clientID] ?? []
        #expect(applied.count == threads * each)
        #expect(applied == applied.sorted())           // in id order
        #expect(Set(applied).count == applied.count)   // once each
        #expect(store.syncStatus.state == .idle)
        #expect(store.syncStatus.pushed == threads * each)
        try store.close()
        #expect(store.syncStatus.state == .stopped)
    }

    @Test func startingTwiceOrWithoutATargetIsMisuse() throws {
        let store = Store(), server = FakeServer()
        #expect(throws: OptimistError.self) { try store.startSync(SyncOptions()) }
        #expect(throws: OptimistError.self) { try store.startSync(SyncOptions(url: "")) }
        #expect(throws: OptimistError.self) { try store.startSync(SyncOptions(url: "ftp://x")) }
        #expect(throws: OptimistError.self) { try store.startSync(SyncOptions(transport: server, maxBatch: 0)) }
        #expect(throws: OptimistError.self) { try store.syncNow() }
        try store.startSync(options(server))
        #expect(throws: OptimistError.self) { try store.startSync(options(server)) }
        #expect(throws: OptimistError.self) { try store.outboxNext(now: 0) }   // the sync owns the outbox
        store.stopSync()
        store.stopSync()   // idempotent
        #expect(try store.outboxNext(now: 0) == nil)
        try store.startSync(options(server))   // startable again
        try store.close()
    }

    /// A transport that blocks until told, or until the sync cancels it.
    final class Gate: @unchecked Sendable {
        let entered = Atomic<Bool>(false)
        let sawCancel = Atomic<Bool>(false)
        var cancelled: Bool { sawCancel.load(ordering: .sequentiallyConsistent) }
    }

    struct BlockingTransport: SyncTransport {
        let gate: Gate
        let inner: FakeServer
        func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
            guard request.endpoint == .push else { return inner.send(request, cancelled: cancelled) }
            gate.entered.store(true, ordering: .sequentiallyConsistent)
            while !cancelled() { usleep(1_000) }
            gate.sawCancel.store(true, ordering: .sequentiallyConsistent)
            return .unreachable("cancelled")
        }
    }

    @Test(arguments: ["stop", "close"])
    func stoppingDuringARequestCancelsItAndLosesNothing(how: String) throws {
        let dir = TempDir()
        let path = dir.file("s.optimist")
        let store = try Store.open(path: path)
        let gate = Gate(), server = FakeServer()
        let id = try store.mutate([put("q", "a", ["v": 1])])
        try store.startSync(SyncOptions(transport: BlockingTransport(gate: gate, inner: server), pullIntervalMs: 0))
        while !gate.entered.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
        #expect(try store.status(id) == .inflight)
        if how == "stop" {
            store.stopSync()
            #expect(gate.cancelled)
            #expect(try store.status(id) == .pending)   // back in the queue
            #expect(store.syncStatus.state == .stopped)
            try store.close()
        } else {
            try store.close()
            #expect(gate.cancelled)
        }
        let again = try Store.open(path: path)
        #expect(try again.status(id) == .pending)
        #expect(try again.get("q", "a") == ["v": 1])
        try again.close()
    }

    @Test func syncStatesArriveAsAnAsyncSequence() async throws {
        let store = Store(), server = FakeServer()
        try store.startSync(options(server))
        let states = try store.syncStates()
        try store.mutate([put("q", "a", [:])])
        #expect(try store.waitForSyncIdle(timeoutMs: 10_000))
        store.stopSync()
        var seen = [SyncState]()
        for await s in states { seen.append(s.state) }
        #expect(seen.last == .stopped)
        #expect(seen.contains(.idle))
        try store.close()
    }
}

/// Runs `body` on a new detached pthread.
@discardableResult
func spawn(_ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box { let f: @Sendable () -> Void; init(_ f: @escaping @Sendable () -> Void) { self.f = f } }
    var t = pthread_t()
    let ctx = Unmanaged.passRetained(Box(body)).toOpaque()
    let rc = pthread_create(&t, nil, { p in
        Unmanaged<Box>.fromOpaque(p!).takeRetainedValue().f()
        return nil
    }, ctx)
    if rc == 0 { pthread_detach(t) }
    return rc == 0
}
