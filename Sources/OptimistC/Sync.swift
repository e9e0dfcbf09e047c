#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Optimist
import Synchronization

// The background sync: optimist_sync_* over `Store.startSync` and its controls, a host's C
// transport wrapped as a `SyncTransport`, and the C status listener.
//
// `optimist_sync_options` is declared in Include/optimist.h; as for `optimist_change` (see
// Subscriptions.swift) this target has no C module to import it from, so it is read from raw
// memory with the C layout written out below. The struct is versioned the libgit2 way: its
// first member is the version the caller was compiled against, and each version only ever
// appends members, so the library reads exactly the members that version has. Version 1 is
// the only one there is:
//
//     struct optimist_sync_options {      offset (LP64)
//         unsigned int version;                 0
//         const char *url;                      8
//         const char *const *headers;          16
//         int64_t pull_interval_ms;            24
//         uint32_t max_batch;                  32
//         int64_t timeout_ms;                  40
//         int64_t backoff_base_ms;             48
//         int64_t backoff_max_ms;              56
//         optimist_transport transport;        64
//         void *transport_ctx;                 72
//         optimist_sync_listener on_status;    80
//         void *status_ctx;                    88
//     };                                  size 96
//
// Tests/C/sync_callback.c checks these offsets with offsetof/sizeof.
enum SyncOptionsLayout {
    static let pointer = MemoryLayout<UnsafeRawPointer>.size
    static let int64 = MemoryLayout<Int64>.alignment
    static let version = 0
    static let url = align(4, pointer)
    static let headers = url + pointer
    static let pullIntervalMs = align(headers + pointer, int64)
    static let maxBatch = pullIntervalMs + 8
    static let timeoutMs = align(maxBatch + 4, int64)
    static let backoffBaseMs = timeoutMs + 8
    static let backoffMaxMs = backoffBaseMs + 8
    static let transport = align(backoffMaxMs + 8, pointer)
    static let transportContext = transport + pointer
    static let onStatus = transportContext + pointer
    static let statusContext = onStatus + pointer

    /// The versions this library reads (`OPTIMIST_SYNC_OPTIONS_VERSION` and older).
    static let knownVersions: ClosedRange<UInt32> = 1...1

    private static func align(_ offset: Int, _ alignment: Int) -> Int {
        (offset + alignment - 1) / alignment * alignment
    }
}

/// `int (*)(void *ctx, const char *endpoint, const char *url, const char *body,
///          const char *const *headers, int64_t timeout_ms,
///          int *out_status, const char **out_body, int64_t *out_retry_after_ms)`
public typealias CTransport = @convention(c) (
    UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
    UnsafePointer<UnsafePointer<CChar>?>?, Int64,
    UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafeMutablePointer<Int64>?
) -> Int32

/// `void (*)(void *ctx, const char *status_json)`
public typealias CSyncListener = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void

/// The longest `Retry-After` a host transport may ask for: a day (as the built-in transport).
private let maxRetryAfterMs: Int64 = 86_400_000
/// Upper bounds this layer puts on the options, so the sync's time arithmetic (now + interval,
/// base << failures) stays far from Int64 overflow, which would trap: a day for the backoff
/// and a year for the pull interval.
private let maxBackoffMs: Int64 = 86_400_000
private let maxPullIntervalMs: Int64 = 365 * 86_400_000

/// A host's C transport as the sync's `SyncTransport`. The context is the host's: we only hand
/// it back, on the sync's thread, so its thread-safety is the host's contract (the header says
/// so); hence `@unchecked Sendable`.
struct HostTransport: SyncTransport, @unchecked Sendable {
    let fn: CTransport
    let context: UnsafeMutableRawPointer?

    /// Builds the C header array ("Name: value" strings, NULL-terminated, valid for the call),
    /// calls the host, copies its body at once and maps the answer. A reply that arrives after
    /// the sync began stopping is ignored (the host cannot be interrupted: it is waited for).
    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        var lines = [UnsafeMutablePointer<CChar>?]()
        lines.reserveCapacity(request.headers.count)
        defer { for p in lines { free(p) } }
        for h in request.headers {
            guard let line = strdup("\(h.name): \(h.value)") else { return .unreachable("out of memory for the request's headers") }
            lines.append(line)
        }
        var headers = lines.map { UnsafePointer($0) }
        headers.append(nil)

        var status: Int32 = 0
        var body: UnsafePointer<CChar>?
        var retryAfter: Int64 = -1
        let endpoint = request.endpoint == .push ? cString("push") : cString("pull")
        let rc = headers.withUnsafeBufferPointer { h in
            request.url.withCString { url in
                request.body.withCString { requestBody in
                    fn(context, endpoint, url, requestBody, h.baseAddress, request.timeoutMs, &status, &body, &retryAfter)
                }
            }
        }
        // Copied before anything else runs: the host may reuse the buffer on its next call.
        let text = body.map { String(cString: $0) }
        if cancelled() { return .unreachable("the sync is stopping: the reply is ignored") }
        guard rc == 0 else {
            let why = text.map { $0.isEmpty ? "" : ": \($0)" } ?? ""
            return .unreachable("the host transport got no answer (it returned \(rc))\(why)")
        }
        // A NULL body is an empty one: the protocol check upstream reports it.
        return .http(status: Int(status), body: text ?? "",
                     retryAfterMs: retryAfter >= 0 ? min(retryAfter, maxRetryAfterMs) : nil)
    }
}

/// A C status listener, called on the sync's thread with the status as JSON (valid during the
/// call only).
private final class SyncListenerBox: @unchecked Sendable {
    let fn: CSyncListener
    let context: UnsafeMutableRawPointer?
    init(fn: @escaping CSyncListener, context: UnsafeMutableRawPointer?) {
        self.fn = fn
        self.context = context
    }

    func deliver(_ status: SyncStatus) {
        JSONWriter.string(status.json).withCString { fn(context, $0) }
    }
}

/// A NULL-terminated array of "Name: value" strings: split at the first ':', the value's
/// leading spaces and tabs dropped. NULL is no headers. A string without ':' is `.misuse`, one
/// that is not UTF-8 `.invalid`; the names and values are then checked by the sync itself.
/// Messages name the position, never the text (a header may hold a secret).
func syncHeaders(_ array: UnsafePointer<UnsafePointer<CChar>?>?) throws(OptimistError) -> [SyncHeader] {
    guard let array else { return [] }
    var out = [SyncHeader]()
    var i = 0
    while let p = array[i] {
        let line = try text(p, "a header")
        guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            throw .misuse("headers[\(i)] has no ':' (headers are \"Name: value\" strings)")
        }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        out.append(SyncHeader(name, String(value)))
        i += 1
    }
    return out
}

/// The options a C caller gave, as `SyncOptions`, and its status listener if any.
private func syncOptions(_ p: UnsafeRawPointer) throws(OptimistError) -> (SyncOptions, SyncListenerBox?) {
    typealias L = SyncOptionsLayout
    let version = p.load(fromByteOffset: L.version, as: UInt32.self)
    guard L.knownVersions.contains(version) else {
        throw .misuse("optimist_sync_options.version is \(version); this library reads version 1 (OPTIMIST_SYNC_OPTIONS_VERSION): initialise the struct with OPTIMIST_SYNC_OPTIONS_INIT")
    }
    let url = try optionalText(p.load(fromByteOffset: L.url, as: UnsafePointer<CChar>?.self), "url")
    let headers = try syncHeaders(p.load(fromByteOffset: L.headers, as: UnsafePointer<UnsafePointer<CChar>?>?.self))
    let transport = p.load(fromByteOffset: L.transport, as: UnsafeRawPointer?.self).map {
        HostTransport(fn: unsafeBitCast($0, to: CTransport.self),
                      context: p.load(fromByteOffset: L.transportContext, as: UnsafeMutableRawPointer?.self))
    }
    let listener = p.load(fromByteOffset: L.onStatus, as: UnsafeRawPointer?.self).map {
        SyncListenerBox(fn: unsafeBitCast($0, to: CSyncListener.self),
                        context: p.load(fromByteOffset: L.statusContext, as: UnsafeMutableRawPointer?.self))
    }
    let options = SyncOptions(
        url: url, transport: transport, headers: headers,
        pullIntervalMs: p.load(fromByteOffset: L.pullIntervalMs, as: Int64.self),
        maxBatch: Int(p.load(fromByteOffset: L.maxBatch, as: UInt32.self)),
        timeoutMs: p.load(fromByteOffset: L.timeoutMs, as: Int64.self),
        backoffBaseMs: p.load(fromByteOffset: L.backoffBaseMs, as: Int64.self),
        backoffMaxMs: p.load(fromByteOffset: L.backoffMaxMs, as: Int64.self))
    return (options, listener)
}

@_cdecl("optimist_sync_start")
public func optimist_sync_start(_ handle: OpaquePointer?, _ opts: UnsafeRawPointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        guard let opts else { throw .misuse("opts is NULL (use OPTIMIST_SYNC_OPTIONS_INIT)") }
        var (options, listener) = try syncOptions(opts)
        if let listener { options.onStatus = { listener.deliver($0) } }
        try s.startSync(options)
    }
}

@_cdecl("optimist_sync_stop")
public func optimist_sync_stop(_ handle: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in try store(handle).stopSync() }
}

@_cdecl("optimist_sync_now")
public func optimist_sync_now(_ handle: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in try store(handle).syncNow() }
}

@_cdecl("optimist_sync_set_headers")
public func optimist_sync_set_headers(_ handle: OpaquePointer?, _ headers: UnsafePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        try s.setSyncHeaders(try syncHeaders(headers))
    }
}

@_cdecl("optimist_sync_wait_idle")
public func optimist_sync_wait_idle(_ handle: OpaquePointer?, _ timeoutMs: Int64, _ outIdle: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let out = try out(outIdle, "out_idle")
        guard timeoutMs >= 0 else { throw .misuse("timeout_ms must not be negative") }
        // The wait adds the timeout to the clock: keep the sum from overflowing (INT64_MAX
        // means "as long as it takes" all the same).
        out.pointee = try s.waitForSyncIdle(timeoutMs: min(timeoutMs, Int64.max / 4)) ? 1 : 0
    }
}

@_cdecl("optimist_sync_status")
public func optimist_sync_status(_ handle: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let out = try out(outJSON, "out_json")
        out.pointee = try handOut(JSONWriter.string(s.syncStatus.json))
    }
}
