import OptimistCore
import OptimistModel

/// How a sync runs. Defaults are those of the protocol's documentation.
public struct SyncOptions: Sendable {
    /// The server's base URL (`http://HOST:PORT`); the sync POSTs to `/push` and `/pull` under
    /// it. Required unless ``transport`` is set.
    public var url: String?
    /// The host's own transport; nil: the built-in HTTP transport.
    public var transport: (any SyncTransport)?
    /// Sent with every request (e.g. `Authorization`); replace them with `setSyncHeaders`.
    public var headers: [SyncHeader]
    /// How often to pull when nothing else happens, in ms; 0: only at start, after pushes
    /// and on `syncNow`.
    public var pullIntervalMs: Int64
    /// The most mutations one push carries.
    public var maxBatch: Int
    /// A request's timeout, in ms.
    public var timeoutMs: Int64
    /// The first wait after a failed request, in ms; it doubles per failure, with jitter.
    public var backoffBaseMs: Int64
    /// The cap on that wait, in ms.
    public var backoffMaxMs: Int64
    /// A reply body larger than this is a protocol error (nothing of it is applied).
    public var maxResponseBytes: Int
    /// Ids sent at most in a pull's `unacked` list.
    public var maxUnacked: Int
    /// Keeps an event stream open to the server (`GET {url}/events`, Server-Sent Events) while
    /// the sync runs: the server pokes it when something the user sees changed, and the sync
    /// pulls at once; while it is live, the sync does not pull on ``pullIntervalMs``. Without
    /// a stream (turned off, a transport that is not a ``SyncEventSource``, a server without
    /// one, a stream that died) the sync pulls at its interval. Default true.
    public var events: Bool
    /// Called on the sync's thread with every new status (state, error or counters), from the
    /// first one on; it must return quickly.
    public var onStatus: (@Sendable (SyncStatus) -> Void)?

    /// The largest pull interval, timeout and backoff accepted: a year, a day, a day.
    public static let maxPullIntervalMs: Int64 = 365 * 86_400_000
    public static let maxTimeoutMs: Int64 = 86_400_000
    public static let maxBackoffMs: Int64 = 86_400_000

    public init(url: String? = nil, transport: (any SyncTransport)? = nil, headers: [SyncHeader] = [],
                pullIntervalMs: Int64 = 5_000, maxBatch: Int = 100, timeoutMs: Int64 = 10_000,
                backoffBaseMs: Int64 = 500, backoffMaxMs: Int64 = 30_000,
                maxResponseBytes: Int = 64 << 20, maxUnacked: Int = 1_000, events: Bool = true,
                onStatus: (@Sendable (SyncStatus) -> Void)? = nil) {
        self.url = url
        self.transport = transport
        self.headers = headers
        self.pullIntervalMs = pullIntervalMs
        self.maxBatch = maxBatch
        self.timeoutMs = timeoutMs
        self.backoffBaseMs = backoffBaseMs
        self.backoffMaxMs = backoffMaxMs
        self.maxResponseBytes = maxResponseBytes
        self.maxUnacked = maxUnacked
        self.events = events
        self.onStatus = onStatus
    }

    /// Checks the options as `startSync` does.
    package func validated() throws(OptimistError) -> SyncOptions {
        var o = self
        if let u = url, u.isEmpty { o.url = nil }
        guard o.url != nil || o.transport != nil else { throw .misuse("sync_start needs a URL or a transport") }
        if let u = o.url {
            guard u.hasPrefix("http://") || u.hasPrefix("https://") else {
                throw .misuse("the sync URL must start with http:// or https:// (got \(u))")
            }
            while o.url!.hasSuffix("/") { o.url!.removeLast() }
        }
        guard maxBatch >= 1 else { throw .misuse("max_batch must be at least 1") }
        guard pullIntervalMs >= 0, pullIntervalMs <= Self.maxPullIntervalMs else {
            throw .misuse("pull_interval_ms must be between 0 and \(Self.maxPullIntervalMs) (a year)")
        }
        guard timeoutMs >= 1, timeoutMs <= Self.maxTimeoutMs else {
            throw .misuse("timeout_ms must be between 1 and \(Self.maxTimeoutMs) (a day)")
        }
        guard backoffBaseMs >= 1, backoffMaxMs >= backoffBaseMs, backoffMaxMs <= Self.maxBackoffMs else {
            throw .misuse("backoff: base at least 1 ms, the cap at least the base and at most \(Self.maxBackoffMs) (a day)")
        }
        guard maxResponseBytes >= 1024 else { throw .misuse("max_response_bytes must be at least 1024") }
        guard maxUnacked >= 1 else { throw .misuse("max_unacked must be at least 1") }
        for h in headers { try SyncHeader.check(h) }
        return o
    }
}

extension SyncHeader {
    /// A header name is a token; neither part may hold a line break (header injection).
    package static func check(_ h: SyncHeader) throws(OptimistError) {
        guard !h.name.isEmpty, h.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
            throw .misuse("bad header name \"\(h.name)\"")
        }
        guard !h.value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
            throw .misuse("the value of header \(h.name) holds a line break")
        }
    }
}
