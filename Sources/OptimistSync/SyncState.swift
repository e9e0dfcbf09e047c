import OptimistCore
import OptimistModel

/// What the sync is doing.
public enum SyncState: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Nothing to send; waiting for a mutation, the pull interval or `syncNow`.
    case idle
    case pushing
    case pulling
    /// The server is overloaded or failing (HTTP 429, 5xx): waiting before trying again.
    case backoff
    /// The server did not answer (refused, reset, timeout): waiting before trying again.
    case offline
    /// HTTP 401 or 403: paused until the host sets new headers (or restarts the sync).
    case unauthorized
    /// The server answered something that is not the protocol (another 4xx, a bad body):
    /// nothing was rolled back; tried again after backoff.
    case error
    /// Not running (never started, stopped, or the store closed).
    case stopped

    public var description: String { rawValue }
}

/// The sync's event stream (`GET {url}/events`, see ``SyncOptions/events``).
public enum SyncStreamState: String, Sendable, CaseIterable, CustomStringConvertible {
    /// No stream is tried: turned off (``SyncOptions/events``), a transport that cannot hold
    /// one (a C host's callback), or no sync running. The sync polls at its interval.
    case off
    /// No stream at the moment: connecting, or waiting to try again (the connection failed or
    /// ended, the server has no stream, or it answered 401 or 403 and new headers are awaited).
    /// The sync polls at its interval meanwhile.
    case connecting
    /// The stream is open and the server said it is ready: a change the server pokes about is
    /// pulled at once, and the sync does not pull on its interval.
    case live

    public var description: String { rawValue }
}

/// A snapshot of the sync: its state, the last error and counters.
public struct SyncStatus: Sendable, Equatable {
    public var state: SyncState
    /// The reason of the last failure (transport, HTTP status or protocol), nil after none.
    public var lastError: String?
    /// Not-yet-ended mutations by status, read from the store when the status was taken.
    public var pending: Int
    public var inflight: Int
    public var failed: Int
    /// The pull cursor persisted with the store.
    public var cursor: String?
    /// Mutations the server answered `ok` (this sync's life).
    public var pushed: Int
    /// Changes received by pulls (this sync's life).
    public var pulled: Int
    /// The event stream's state.
    public var stream: SyncStreamState

    public init(state: SyncState, lastError: String? = nil, pending: Int = 0, inflight: Int = 0, failed: Int = 0,
                cursor: String? = nil, pushed: Int = 0, pulled: Int = 0, stream: SyncStreamState = .off) {
        self.state = state
        self.lastError = lastError
        self.pending = pending
        self.inflight = inflight
        self.failed = failed
        self.cursor = cursor
        self.pushed = pushed
        self.pulled = pulled
        self.stream = stream
    }

    /// The status as a JSON object (the form C and Python read): `state`, `last_error`,
    /// `pending`, `inflight`, `failed`, `cursor`, `pushed`, `pulled`, `stream`.
    public var json: JSON {
        [
            "state": .string(state.rawValue),
            "last_error": lastError.map(JSON.string) ?? .null,
            "pending": .number(Double(pending)),
            "inflight": .number(Double(inflight)),
            "failed": .number(Double(failed)),
            "cursor": cursor.map(JSON.string) ?? .null,
            "pushed": .number(Double(pushed)),
            "pulled": .number(Double(pulled)),
            "stream": .string(stream.rawValue),
        ]
    }
}
