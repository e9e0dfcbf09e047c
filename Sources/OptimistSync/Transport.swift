import OptimistCore
import OptimistModel

/// The two calls of the wire protocol.
public enum SyncEndpoint: String, Sendable {
    case push, pull
}

/// One HTTP exchange the sync asks of its transport: `POST {url}` with `body` (JSON).
public struct SyncRequest: Sendable {
    public var endpoint: SyncEndpoint
    /// The full URL: the sync's base URL with `/push` or `/pull` appended (empty when the
    /// sync was started with a transport and no URL: the transport knows where to send).
    public var url: String
    public var body: String
    /// The host's headers (`sync_set_headers`), e.g. `Authorization: Bearer …`.
    public var headers: [SyncHeader]
    public var timeoutMs: Int64

    public init(endpoint: SyncEndpoint, url: String, body: String, headers: [SyncHeader], timeoutMs: Int64) {
        self.endpoint = endpoint
        self.url = url
        self.body = body
        self.headers = headers
        self.timeoutMs = timeoutMs
    }
}

public struct SyncHeader: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What came back.
public enum SyncReply: Sendable, Equatable {
    /// An HTTP answer. `retryAfterMs`: the `Retry-After` header, when there was one.
    case http(status: Int, body: String, retryAfterMs: Int64?)
    /// No answer: connection refused or reset, timeout, DNS failure, cancelled.
    case unreachable(String)
}

extension SyncReply {
    /// A `Retry-After` header's value in milliseconds, as every transport reads it: delay
    /// seconds (spaces or tabs around them, up to 9 digits, capped at a day, the value ending at
    /// a line end), else nil: an HTTP date, or anything else, is no hint (the sync's own backoff
    /// then applies). Bytes, not Characters: Swift reads "\r\n" as one Character.
    public static func retryAfterMs<Bytes: Sequence>(headerValue: Bytes) -> Int64? where Bytes.Element == UInt8 {
        var seconds: Int64 = 0, digits = 0
        for b in headerValue {
            if b == 0x20 || b == 0x09 { if digits == 0 { continue } else { break } }
            if b == 0x0D || b == 0x0A { break }
            guard b >= 0x30 && b <= 0x39, digits < 9 else { return nil }
            seconds = seconds * 10 + Int64(b - 0x30)
            digits += 1
        }
        return digits > 0 ? min(seconds, 86_400) * 1000 : nil
    }
}

/// Sends the sync's requests: the built-in HTTP transport, or the host's own HTTP stack (so an
/// app can reuse its sessions, proxies and token refresh).
///
/// `send` is called on the sync's thread, one request at a time, and may block up to the
/// request's timeout. It should give up early once `cancelled()` turns true (the sync is
/// stopping); a reply then is ignored.
public protocol SyncTransport: Sendable {
    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply
}
