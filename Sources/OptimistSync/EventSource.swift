import OptimistThreads
import Synchronization

// The stream port: an optional capability of a transport, beside `SyncTransport.send`.
//
// While a sync runs, the client keeps one `GET {url}/events` open (Server-Sent Events); the
// server pokes it when something the user sees changed, and the sync pulls at once (see
// EventStream.swift). A stream needs a connection and a thread of its own (the sync's thread
// blocks in push and pull), so it is a separate call: a transport that can hold one conforms
// to `SyncEventSource`; one that cannot (a C host's callback) does not, and the sync just
// polls at its interval.

/// One stream the sync asks of its transport: `GET {url}`.
public struct SyncStreamRequest: Sendable {
    /// The sync's base URL with `/events` appended (empty when the sync was started with a
    /// transport and no URL).
    public var url: String
    /// The sync's headers (`sync_set_headers`), e.g. `Authorization: Bearer …`. The transport
    /// adds `Accept: text/event-stream` itself.
    public var headers: [SyncHeader]
    /// How long connecting may take, in ms (the sync's request timeout). The stream itself has
    /// no overall timeout: it is open for as long as it lasts.
    public var connectTimeoutMs: Int64

    public init(url: String, headers: [SyncHeader], connectTimeoutMs: Int64) {
        self.url = url
        self.headers = headers
        self.connectTimeoutMs = connectTimeoutMs
    }
}

/// The head of a stream's reply.
public struct SyncStreamResponse: Sendable, Equatable {
    public var status: Int
    /// The `Content-Type` header's value, as sent (nil: none).
    public var contentType: String?
    /// The `Retry-After` header in ms (``SyncReply/retryAfterMs(headerValue:)``), nil: none.
    public var retryAfterMs: Int64?

    public init(status: Int, contentType: String?, retryAfterMs: Int64? = nil) {
        self.status = status
        self.contentType = contentType
        self.retryAfterMs = retryAfterMs
    }
}

/// What a transport hands over while a stream is open, in order: the reply's head once, then
/// its body as it arrives (for every status: an error's body says why).
public enum SyncStreamPart: Sendable, Equatable {
    case response(SyncStreamResponse)
    case data([UInt8])
}

/// Stops a stream from another thread: the sync stopping, or the stream's own silence check.
///
/// A transport checks ``isCancelled`` at least about once a second while it waits for bytes,
/// and returns once it is true. To stop at once instead of at its next check, it may hand
/// ``onCancel(_:)`` a handler that interrupts its wait (wakes a poll, cancels a task).
public final class SyncStreamCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    /// A time (ms, on `clock`) from which the stream counts as cancelled: the silence limit,
    /// moved on by every byte that arrives. Checked when the transport looks, not enforced
    /// by a timer: a transport looks at least once a second.
    private let deadline = Atomic<Int64>(.max)
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    private let clock: @Sendable () -> Int64

    public convenience init() { self.init(clock: monotonicMilliseconds) }

    package init(clock: @escaping @Sendable () -> Int64) { self.clock = clock }

    public var isCancelled: Bool {
        cancelled.load(ordering: .acquiring) || clock() >= deadline.load(ordering: .relaxed)
    }

    /// Cancels the stream: ``isCancelled`` turns true, and the handler, if any, is called
    /// (on this thread, before this returns). Idempotent.
    public func cancel() {
        handler.withLock { h in
            guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            h?()
            h = nil
        }
    }

    /// Sets the handler a ``cancel()`` calls (nil: none), replacing any. Returns false, and
    /// sets nothing, when the stream is already cancelled. Once a call that sets nil returned,
    /// no call of the old handler is in progress or to come: what it touches may be freed.
    @discardableResult
    public func onCancel(_ newHandler: (@Sendable () -> Void)?) -> Bool {
        handler.withLock { h in
            guard !cancelled.load(ordering: .acquiring) else {
                h = nil
                return false
            }
            h = newHandler
            return true
        }
    }

    /// The stream counts as cancelled from `ms` on (the stream's silence limit).
    package func cancelAt(_ ms: Int64) { deadline.store(ms, ordering: .relaxed) }
}

/// A transport that can hold the sync's event stream (`CurlTransport` and
/// `URLSessionTransport` do; a C host's transport callback does not, and the sync then only
/// polls at its interval).
///
/// `openStream` is called on the stream's own thread, one stream at a time, and blocks for as
/// long as the stream is open. It sends `GET request.url` with the request's headers and
/// `Accept: text/event-stream`, follows no redirect, gives up connecting after
/// `connectTimeoutMs`, and has no overall timeout. It calls `receive` on the calling thread:
/// once with the reply's head, then with the body's bytes as they arrive, and returns when
/// the server ended the reply, the connection failed or broke, or `cancellation` was
/// cancelled (which `receive` itself may do). How it ended needs no saying: the sync opens
/// another stream after a wait either way, and a stream that never delivered a head counts
/// as no answer. It must not stop the sync or close the store (that waits for this thread).
public protocol SyncEventSource: Sendable {
    func openStream(_ request: SyncStreamRequest, cancellation: SyncStreamCancellation,
                    receive: (SyncStreamPart) -> Void)
}
