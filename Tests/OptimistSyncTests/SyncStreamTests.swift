import Testing
import Synchronization
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistOpen
import OptimistThreads
#if canImport(Glibc)
import Glibc
#endif

/// A protocol server in the test with an event stream: pushes and pulls go to a
/// ``FakeServer``; each stream says `ready`, then `poke` each time the test calls ``poke()``.
/// ``refuse`` answers the next streams 401.
final class StreamingServer: SyncTransport, SyncEventSource, @unchecked Sendable {
    let inner = FakeServer()
    private let lock = Mutex(())
    private var pokes = 0
    private var refusing = false
    private var _streams: [SyncStreamRequest] = []

    var streams: [SyncStreamRequest] { lock.withLock { _ in _streams } }
    func poke() { lock.withLock { _ in pokes += 1 } }
    func refuse(_ on: Bool) { lock.withLock { _ in refusing = on } }

    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply { inner.send(request, cancelled: cancelled) }

    func openStream(_ request: SyncStreamRequest, cancellation: SyncStreamCancellation,
                    receive: (SyncStreamPart) -> Void) {
        let (refused, seen) = lock.withLock { _ in
            _streams.append(request)
            return (refusing, pokes)
        }
        if refused {
            receive(.response(SyncStreamResponse(status: 401, contentType: "application/json")))
            receive(.data(Array(#"{"error":"token expired"}"#.utf8)))
            return
        }
        receive(.response(SyncStreamResponse(status: 200, contentType: "text/event-stream")))
        receive(.data(Array("event: ready\ndata: {}\n\n".utf8)))
        var sent = seen
        while !cancellation.isCancelled {
            let now = lock.withLock { _ in pokes }
            if now > sent {
                sent = now
                receive(.data(Array("event: poke\ndata: {}\n\n".utf8)))
            }
            usleep(1_000)
        }
    }
}

/// The stream inside a running sync: pokes pull, the interval rests while it is live, a poke
/// respects the server's backoff, a refusal pauses the sync until new headers.
@Suite struct SyncStreamTests {
    /// An hour between interval pulls: any pull in these tests comes from the stream.
    func options(_ server: StreamingServer, events: Bool = true) -> SyncOptions {
        SyncOptions(url: "http://sync.test", transport: server, headers: [SyncHeader("Authorization", "Bearer a")],
                    pullIntervalMs: 3_600_000, timeoutMs: 2_500, backoffBaseMs: 5, backoffMaxMs: 50, events: events)
    }

    @Test func aPokePullsAtOnce() throws {
        let store = Store(), server = StreamingServer()
        try store.startSync(options(server))
        #expect(eventually { store.syncStatus.stream == .live })
        #expect(try store.waitForSyncIdle(timeoutMs: patience))
        let request = try #require(server.streams.first)
        #expect(request.url == "http://sync.test/events")
        #expect(request.headers == [SyncHeader("Authorization", "Bearer a")] && request.connectTimeoutMs == 2_500)
        for i in 0..<3 {
            server.inner.serverApply([put("notes", Key("n\(i)"), ["i": .number(Double(i))])])
            server.poke()
            #expect(eventually { (try? store.get("notes", Key("n\(i)"))) == ["i": .number(Double(i))] })
        }
        #expect(store.syncStatus.stream == .live)
        try store.close()
        #expect(store.syncStatus.stream == .off)
    }

    @Test func statusListenersHearTheStreamsState() throws {
        let store = Store(), server = StreamingServer()
        let seen = Mutex<[SyncStreamState]>([])
        var o = options(server)
        o.onStatus = { s in seen.withLock { if $0.last != s.stream { $0.append(s.stream) } } }
        try store.startSync(o)
        #expect(eventually { seen.withLock { $0 }.contains(.live) })
        store.stopSync()
        // The first status may come after the stream went live already.
        let heard = seen.withLock { $0 }
        #expect(heard == [.connecting, .live, .off] || heard == [.live, .off])
        #expect(JSONWriter.string(store.syncStatus.json).contains(#""stream":"off""#))
        try store.close()
    }

    @Test func aPokeDoesNotCutTheServersBackoffShort() throws {
        let store = Store(), server = StreamingServer()
        try store.startSync(options(server))
        #expect(eventually { store.syncStatus.stream == .live })
        #expect(try store.waitForSyncIdle(timeoutMs: patience))
        // The next pull is answered 503 with a minute's Retry-After.
        server.inner.scheduleFault(.status(503, retryAfterMs: 60_000))
        server.poke()
        #expect(eventually { store.syncStatus.state == .backoff })
        let pulls = server.inner.pullCount
        server.poke()
        server.poke()
        usleep(300_000)
        #expect(server.inner.pullCount == pulls)   // waited, as the server asked
        #expect(store.syncStatus.state == .backoff)
        // The app's "online again" still cuts it short.
        try store.syncNow()
        #expect(eventually { server.inner.pullCount > pulls })
        try store.close()
    }

    @Test func aRefusedStreamPausesTheSyncUntilNewHeaders() throws {
        let store = Store(), server = StreamingServer()
        server.refuse(true)
        try store.startSync(options(server))
        #expect(eventually { store.syncStatus.state == .unauthorized })
        #expect(store.syncStatus.lastError == "events: HTTP 401: token expired")
        #expect(store.syncStatus.stream == .connecting)
        let id = try store.mutate([put("q", "a", [:])])
        usleep(200_000)
        #expect(try store.status(id) == .pending)   // paused: nothing sent
        server.refuse(false)
        try store.setSyncHeaders([SyncHeader("Authorization", "Bearer b")])
        #expect(eventually { store.syncStatus.stream == .live })
        #expect(try store.waitForSyncIdle(timeoutMs: patience))
        #expect(try store.status(id) == .committed)
        #expect(server.streams.last?.headers == [SyncHeader("Authorization", "Bearer b")])
        try store.close()
    }

    @Test func theIntervalPullsWhileNoStreamIsLiveAndRestsWhileOneIs() throws {
        // A 100 ms interval: without a stream, pulls keep coming; with a live one, they stop.
        let polled = StreamingServer()
        var o = options(polled, events: false)
        o.pullIntervalMs = 100
        let a = Store()
        try a.startSync(o)
        #expect(eventually { polled.inner.pullCount >= 4 })
        #expect(a.syncStatus.stream == .off && polled.streams.isEmpty)
        try a.close()

        let streamed = StreamingServer()
        o = options(streamed)
        o.pullIntervalMs = 100
        let b = Store()
        try b.startSync(o)
        #expect(eventually { b.syncStatus.stream == .live })
        #expect(try b.waitForSyncIdle(timeoutMs: patience))
        let pulls = streamed.inner.pullCount
        usleep(500_000)
        #expect(streamed.inner.pullCount == pulls)
        try b.close()
    }

    @Test func aTransportWithoutAStreamOnlyPolls() throws {
        let store = Store(), server = FakeServer()
        try store.startSync(SyncOptions(transport: server, pullIntervalMs: 0))
        #expect(store.syncStatus.stream == .off)
        #expect(try store.waitForSyncIdle(timeoutMs: patience))
        try store.close()
    }
}
