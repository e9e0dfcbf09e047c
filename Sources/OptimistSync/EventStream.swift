import OptimistModel
import OptimistThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sync's event stream: one `GET {url}/events` held open on a thread of its own, through
/// the transport's ``SyncEventSource``, reconnected with backoff for as long as the sync runs.
///
/// The server sends `ready` once connected and `poke` whenever something the user sees
/// changed; either calls `onPoke` (the sync pulls; a pull after `ready` covers what changed
/// while no stream was open). Pokes only ever trigger pulls, so a stream lost loses nothing:
/// the sync pulls at its interval meanwhile.
///
/// - A stream that ends, breaks, or says nothing (not even a keepalive comment) for
///   `silenceMs` is closed and opened again after a backoff: `firstRetryMs` doubling to
///   `maxRetryMs`, half of it plus a random part of the other half; a stream that was live
///   for `healthyMs` starts the backoff again from the first wait. Other statuses back off
///   the same way (`Retry-After` honoured).
/// - 404, 405, or a 200 that is not `text/event-stream`: the server has no stream; tried again
///   after `unsupportedRetryMs`.
/// - 401 or 403: `onRefused` (the sync pauses as `unauthorized`), and the stream waits for
///   new headers (``setHeaders(_:)``). A refusal of headers already replaced is not reported:
///   the stream tries again with the new ones.
///
/// ``wake()`` (the app's "online again") ends a backoff wait at once. ``stop()`` cancels the
/// stream in progress (the transport is interrupted through its ``SyncStreamCancellation``)
/// and joins the thread. The handlers run on the stream's thread, outside its lock.
package final class EventStream: @unchecked Sendable {
    package struct Timing: Sendable {
        package var firstRetryMs: Int64 = 1_000
        package var maxRetryMs: Int64 = 60_000
        package var unsupportedRetryMs: Int64 = 300_000
        package var silenceMs: Int64 = 45_000
        package var healthyMs: Int64 = 60_000
        package init() {}
    }

    package struct Handlers: Sendable {
        /// The server said `ready` or `poke`: pull.
        package var onPoke: @Sendable () -> Void
        /// The stream's state changed.
        package var onState: @Sendable (SyncStreamState) -> Void
        /// HTTP 401 or 403, with the reason (`events: HTTP 401: …`), for headers not replaced
        /// since. Called with the stream's lock held, so that new headers set meanwhile
        /// arrive after it.
        package var onRefused: @Sendable (String) -> Void

        package init(onPoke: @escaping @Sendable () -> Void, onState: @escaping @Sendable (SyncStreamState) -> Void,
                     onRefused: @escaping @Sendable (String) -> Void) {
            self.onPoke = onPoke
            self.onState = onState
            self.onRefused = onRefused
        }
    }

    /// The most of an error reply's body kept for the reason.
    static let maxErrorBody = 4_096

    private let source: any SyncEventSource
    private let url: String
    private let connectTimeoutMs: Int64
    private let timing: Timing
    private let monitor = Monitor()

    // Guarded by `monitor`.
    private var headers: [SyncHeader]
    /// Counts ``setHeaders(_:)`` calls: a refusal is reported only for the headers in use.
    private var generation: UInt64 = 0
    private var stopping = false
    private var woken = false
    /// The stream in progress, for ``stop()`` to cancel.
    private var current: SyncStreamCancellation?
    private var thread: pthread_t?

    // The stream's thread only.
    private var handlers: Handlers?
    private var state = SyncStreamState.connecting
    private var failures = 0
    private var jitterState: UInt64

    package init(source: any SyncEventSource, url: String, headers: [SyncHeader], connectTimeoutMs: Int64,
                 timing: Timing = Timing(), seed: UInt64) {
        self.source = source
        self.url = url
        self.headers = headers
        self.connectTimeoutMs = connectTimeoutMs
        self.timing = timing
        jitterState = seed | 1
    }

    /// Starts the thread; false when it could not start (the sync then only polls) or the
    /// stream was stopped already.
    package func start(_ handlers: Handlers) -> Bool {
        self.handlers = handlers
        return monitor.locked {
            guard !stopping else { return false }
            thread = startThread { [self] in run() }
            return thread != nil
        }
    }

    /// Cancels the stream in progress, ends any wait, and returns once the thread has ended
    /// (no handler runs any more). Not from the stream's own handlers. Idempotent.
    package func stop() {
        let t: pthread_t? = monitor.locked {
            stopping = true
            current?.cancel()
            monitor.broadcast()
            defer { thread = nil }
            return thread
        }
        if let t { joinThread(t) }
    }

    /// The headers of the next connection; ends a wait for new headers after a refusal.
    package func setHeaders(_ new: [SyncHeader]) {
        monitor.locked {
            headers = new
            generation &+= 1
            monitor.broadcast()
        }
    }

    /// Ends a backoff wait at once (not a wait for new headers).
    package func wake() {
        monitor.locked {
            woken = true
            monitor.broadcast()
        }
    }

    // MARK: The thread

    /// What one connection came to.
    private struct Attempt {
        var response: SyncStreamResponse?
        var streaming = false
        var errorBody: [UInt8] = []
        var liveSince: Int64?
        var tooLong = false
    }

    private func run() {
        while true {
            let begun: (SyncStreamRequest, UInt64, SyncStreamCancellation)? = monitor.locked {
                guard !stopping else { return nil }
                woken = false
                let c = SyncStreamCancellation()
                current = c
                return (SyncStreamRequest(url: url, headers: headers, connectTimeoutMs: connectTimeoutMs), generation, c)
            }
            guard let (request, used, cancellation) = begun else { return }
            let attempt = connect(request, cancellation)
            let stop = monitor.locked { () -> Bool in
                current = nil
                return stopping
            }
            if stop { return }
            report(.connecting)
            switch next(after: attempt) {
            case .retry(let ms):
                waitOut(ms)
            case .refused(let reason):
                let refused = monitor.locked { () -> Bool in
                    guard generation == used else { return false }  // new headers already: try them
                    handlers?.onRefused(reason)
                    return true
                }
                if refused { waitForHeaders(after: used) }
            }
        }
    }

    /// One stream, from connecting to its end.
    private func connect(_ request: SyncStreamRequest, _ cancellation: SyncStreamCancellation) -> Attempt {
        var a = Attempt()
        var parser = ServerSentEvents()
        // Also bounds a server that accepts the connection and never answers.
        cancellation.cancelAt(monotonicMilliseconds() + timing.silenceMs)
        source.openStream(request, cancellation: cancellation) { part in
            switch part {
            case .response(let r):
                guard a.response == nil else { return }
                a.response = r
                a.streaming = r.status == 200 && Self.isEventStream(r.contentType)
                if !a.streaming && r.status == 200 { cancellation.cancel() }  // not a stream: nothing to read
            case .data(let bytes):
                cancellation.cancelAt(monotonicMilliseconds() + timing.silenceMs)
                guard a.response != nil else { return }
                guard a.streaming else {
                    a.errorBody.append(contentsOf: bytes.prefix(Self.maxErrorBody - a.errorBody.count))
                    if a.errorBody.count >= Self.maxErrorBody { cancellation.cancel() }
                    return
                }
                let events: [ServerSentEvent]
                do throws(ServerSentEvents.TooLong) {
                    events = try parser.feed(bytes)
                } catch {
                    a.tooLong = true
                    cancellation.cancel()
                    return
                }
                for e in events where e.type == "ready" || e.type == "poke" {
                    if a.liveSince == nil {
                        a.liveSince = monotonicMilliseconds()
                        report(.live)
                    }
                    handlers?.onPoke()
                }
            }
        }
        return a
    }

    private enum Next { case retry(Int64), refused(String) }

    /// What to do after a stream ended.
    private func next(after a: Attempt) -> Next {
        guard let r = a.response, !a.tooLong else { return .retry(backoff(retryAfterMs: nil)) }
        if a.streaming {
            // A stream that served well for a while starts the backoff from the first wait.
            if let since = a.liveSince, monotonicMilliseconds() - since >= timing.healthyMs { failures = 0 }
            return .retry(backoff(retryAfterMs: nil))
        }
        switch r.status {
        case 401, 403:
            let text = SyncMachine.errorText(String(decoding: a.errorBody, as: UTF8.self))
            return .refused("events: HTTP \(r.status)\(text.map { ": \($0)" } ?? "")")
        case 200, 404, 405:
            return .retry(jittered(timing.unsupportedRetryMs))
        default:
            return .retry(backoff(retryAfterMs: r.retryAfterMs))
        }
    }

    /// `text/event-stream`, parameters and case aside.
    static func isEventStream(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }
        let trimmed = type.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        let expected = Array("text/event-stream".utf8)
        return trimmed.count == expected.count && zip(trimmed, expected).allSatisfy { $0 | 0x20 == $1 }
    }

    private func backoff(retryAfterMs: Int64?) -> Int64 {
        failures += 1
        let shift = Int64(min(failures - 1, 30))
        let full = min(timing.maxRetryMs, timing.firstRetryMs << shift)
        var wait = jittered(full)
        if let r = retryAfterMs { wait = max(wait, min(r, SyncOptions.maxBackoffMs)) }
        return wait
    }

    /// Half of `full`, plus a random part of the other half: clients cut off together do not
    /// come back together.
    private func jittered(_ full: Int64) -> Int64 {
        jitterState ^= jitterState << 13
        jitterState ^= jitterState >> 7
        jitterState ^= jitterState << 17
        let half = full / 2
        return half + Int64(jitterState % UInt64(full - half + 1))
    }

    private func report(_ s: SyncStreamState) {
        guard s != state else { return }
        state = s
        handlers?.onState(s)
    }

    /// Waits `ms`, or until stopped or woken.
    private func waitOut(_ ms: Int64) {
        let until = monotonicMilliseconds() + ms
        monitor.locked {
            while !stopping && !woken {
                let left = until - monotonicMilliseconds()
                if left <= 0 { return }
                monitor.wait(milliseconds: Int(min(left, 60_000)))
            }
        }
    }

    /// Waits for headers newer than `used`, or until stopped.
    private func waitForHeaders(after used: UInt64) {
        monitor.locked {
            while !stopping && generation == used { monitor.wait() }
        }
    }
}
