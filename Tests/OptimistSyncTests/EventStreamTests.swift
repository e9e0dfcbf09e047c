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

/// How long a test waits for something that should happen "at once" before it fails: generous,
/// for loaded machines (nothing here measures speed).
let patience: Int64 = 20_000

/// Polls `condition` until it holds or `ms` pass.
func eventually(_ ms: Int64 = patience, _ condition: () -> Bool) -> Bool {
    let end = monotonicMilliseconds() + ms
    while monotonicMilliseconds() < end {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// An event source whose connections follow scripts, one per connection in order (then every
/// further connection holds its stream open, answering nothing). It records each request.
final class ScriptedSource: SyncEventSource, @unchecked Sendable {
    enum Step {
        case head(Int, String?, retryAfterMs: Int64? = nil)
        case text(String)
        case bytes([UInt8])
        /// Blocks until the stream is cancelled (stopped, or silent too long).
        case hold
        /// Ends the stream before the rest of the script (a broken connection).
        case fail
        /// Runs a closure on the stream's thread (to race something against the stream).
        case run(@Sendable () -> Void)
    }

    static let sse = "text/event-stream"
    private let lock = Mutex(())
    private var scripts: [[Step]]
    private var _requests: [SyncStreamRequest] = []
    private var _cancelSeen = 0

    init(_ scripts: [[Step]]) { self.scripts = scripts }

    var requests: [SyncStreamRequest] { lock.withLock { _ in _requests } }
    var connections: Int { lock.withLock { _ in _requests.count } }
    /// Streams that ended because they were cancelled.
    var cancelSeen: Int { lock.withLock { _ in _cancelSeen } }
    func add(_ script: [Step]) { lock.withLock { _ in scripts.append(script) } }

    func openStream(_ request: SyncStreamRequest, cancellation: SyncStreamCancellation,
                    receive: (SyncStreamPart) -> Void) {
        let script = lock.withLock { _ -> [Step] in
            _requests.append(request)
            return scripts.isEmpty ? [.head(200, Self.sse), .hold] : scripts.removeFirst()
        }
        for step in script {
            if cancellation.isCancelled { break }
            switch step {
            case .head(let status, let type, let ra):
                receive(.response(SyncStreamResponse(status: status, contentType: type, retryAfterMs: ra)))
            case .text(let t): receive(.data(Array(t.utf8)))
            case .bytes(let b): receive(.data(b))
            case .hold:
                while !cancellation.isCancelled { usleep(1_000) }
            case .fail: return
            case .run(let f): f()
            }
        }
        if cancellation.isCancelled { lock.withLock { _ in _cancelSeen += 1 } }
    }
}

/// What a stream told its owner.
final class StreamLog: @unchecked Sendable {
    private let lock = Mutex(())
    private var _pokes = 0
    private var _states: [SyncStreamState] = []
    private var _refusals: [String] = []
    var pokes: Int { lock.withLock { _ in _pokes } }
    var states: [SyncStreamState] { lock.withLock { _ in _states } }
    var refusals: [String] { lock.withLock { _ in _refusals } }

    var handlers: EventStream.Handlers {
        EventStream.Handlers(
            onPoke: { self.lock.withLock { _ in self._pokes += 1 } },
            onState: { s in self.lock.withLock { _ in self._states.append(s) } },
            onRefused: { r in self.lock.withLock { _ in self._refusals.append(r) } })
    }
}

/// The stream runner alone, over scripted connections: short waits, so that a wrongly short
/// or long one shows in a few hundred milliseconds.
@Suite struct EventStreamTests {
    func timing(silenceMs: Int64 = 60_000) -> EventStream.Timing {
        var t = EventStream.Timing()
        t.firstRetryMs = 10
        t.maxRetryMs = 40
        t.unsupportedRetryMs = 600_000
        t.silenceMs = silenceMs
        return t
    }

    func started(_ source: ScriptedSource, _ log: StreamLog, silenceMs: Int64 = 60_000,
                 headers: [SyncHeader] = [SyncHeader("Authorization", "Bearer a")]) -> EventStream {
        let s = EventStream(source: source, url: "http://server/events", headers: headers, connectTimeoutMs: 1_234,
                            timing: timing(silenceMs: silenceMs), seed: 7)
        #expect(s.start(log.handlers))
        return s
    }

    @Test func readyAndPokesAskForPullsAndTheStreamIsLive() {
        let source = ScriptedSource([[.head(200, "text/event-stream; charset=utf-8"), .text("event: ready\ndata: {}\n\n"),
                                      .text(": keepalive\n\nevent: poke\ndata: {}\n\nevent: other\ndata: {}\n\n"),
                                      .text("event: poke\n"), .text("data: {}\n\n"), .hold]])
        let log = StreamLog()
        let stream = started(source, log)
        #expect(eventually { log.pokes == 3 })
        #expect(log.states == [.live])
        let r = source.requests[0]
        #expect(r.url == "http://server/events" && r.connectTimeoutMs == 1_234)
        #expect(r.headers == [SyncHeader("Authorization", "Bearer a")])
        stream.stop()
        #expect(source.cancelSeen == 1)   // the open stream was cancelled, not left running
        #expect(source.connections == 1)
    }

    @Test func aStreamThatEndsOrFailsIsOpenedAgain() {
        let source = ScriptedSource([
            [.head(200, ScriptedSource.sse), .text("event: ready\ndata: {}\n\n")],   // ends
            [.fail],   // no answer
            [.head(500, "application/json"), .text(#"{"error":"down"}"#)],
            [.head(200, ScriptedSource.sse), .text("event: poke\ndata: {}\n\n"), .hold],
        ])
        let log = StreamLog()
        let stream = started(source, log)
        #expect(eventually { source.connections == 4 && log.pokes == 2 })
        #expect(log.states == [.live, .connecting, .live])
        stream.stop()
    }

    @Test func silenceClosesTheStreamAndReconnects() {
        // The first stream says ready and then nothing; the second keeps talking.
        let source = ScriptedSource([[.head(200, ScriptedSource.sse), .text("event: ready\ndata: {}\n\n"), .hold]])
        let log = StreamLog()
        let stream = started(source, log, silenceMs: 150)
        #expect(eventually { source.connections >= 2 })
        #expect(source.cancelSeen >= 1)
        stream.stop()
    }

    @Test(arguments: [
        [ScriptedSource.Step.head(404, "text/plain"), .text("no such route")],
        [.head(405, nil)],
        [.head(200, "text/html"), .text("<html>")],
        [.head(503, "application/json", retryAfterMs: 600_000)],
    ])
    func aServerWithoutStreamsIsAskedAgainOnlyMuchLater(_ script: [ScriptedSource.Step]) {
        let source = ScriptedSource([script])
        let log = StreamLog()
        let stream = started(source, log)
        #expect(eventually { source.connections == 1 })
        // With a first retry of 10 ms, a short wait would have come back many times by now.
        usleep(300_000)
        #expect(source.connections == 1)
        #expect(log.pokes == 0 && log.refusals.isEmpty)
        // The app's "online again" ends the wait.
        stream.wake()
        #expect(eventually { source.connections == 2 })
        stream.stop()
    }

    @Test(arguments: [401, 403])
    func aRefusalIsReportedAndWaitsForNewHeaders(_ status: Int) {
        let source = ScriptedSource([[.head(status, "application/json"), .text(#"{"error":"token expired"}"#)]])
        let log = StreamLog()
        let stream = started(source, log)
        #expect(eventually { log.refusals.count == 1 })
        #expect(log.refusals == ["events: HTTP \(status): token expired"])
        stream.wake()   // not new headers: the stream keeps waiting
        usleep(300_000)
        #expect(source.connections == 1)
        stream.setHeaders([SyncHeader("Authorization", "Bearer b")])
        #expect(eventually { source.connections == 2 })
        #expect(source.requests[1].headers == [SyncHeader("Authorization", "Bearer b")])
        stream.stop()
    }

    @Test func aRefusalOfHeadersReplacedMeanwhileIsNotReported() {
        let box = Mutex<EventStream?>(nil)
        let source = ScriptedSource([[
            // New headers arrive while the refusal of the old ones is on its way.
            .run { box.withLock { $0 }?.setHeaders([SyncHeader("Authorization", "Bearer fresh")]) },
            .head(401, "application/json"), .text(#"{"error":"expired"}"#),
        ]])
        let log = StreamLog()
        let stream = EventStream(source: source, url: "u", headers: [], connectTimeoutMs: 1, timing: timing(), seed: 1)
        box.withLock { $0 = stream }
        #expect(stream.start(log.handlers))
        #expect(eventually { source.connections == 2 })
        #expect(log.refusals.isEmpty)
        #expect(source.requests[1].headers == [SyncHeader("Authorization", "Bearer fresh")])
        stream.stop()
        box.withLock { $0 = nil }
    }

    @Test func aLineThatNeverEndsIsCutOff() {
        let source = ScriptedSource([
            [.head(200, ScriptedSource.sse), .bytes([UInt8](repeating: UInt8(ascii: "x"), count: 300 << 10)), .hold],
        ])
        let log = StreamLog()
        let stream = started(source, log)
        #expect(eventually { source.connections >= 2 })
        #expect(log.pokes == 0)
        stream.stop()
    }

    @Test func stopEndsAWaitAndAStreamAndIsIdempotent() {
        // Refused: the thread waits for headers that never come; stop ends that wait.
        let refused = ScriptedSource([[.head(401, nil)]])
        let log = StreamLog()
        let a = started(refused, log)
        #expect(eventually { log.refusals.count == 1 })
        a.stop()
        a.stop()
        // Stopped before it started: the start starts nothing.
        let b = EventStream(source: ScriptedSource([]), url: "u", headers: [], connectTimeoutMs: 1, timing: timing(), seed: 1)
        b.stop()
        #expect(!b.start(StreamLog().handlers))
    }
}
