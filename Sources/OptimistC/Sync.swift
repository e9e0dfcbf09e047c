#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import COptimist
import OptimistCore
import OptimistSync
import OptimistOpen
import OptimistModel
import Synchronization

// The background sync: optimist_sync_* over `Store.startSync` and its controls, a host's C
// transport wrapped as a `SyncTransport`, and the C status listener.
//
// `optimist_sync_options` and the callback types are Include/optimist.h's own, imported
// through the COptimist module; the struct is read as every versioned options struct is (see
// Options.swift).

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
    let fn: optimist_transport
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
private extension CCallback where Fn == optimist_sync_listener {
    func deliver(_ status: SyncStatus) {
        JSONWriter.string(status.json).withCString { fn(ctx, $0) }
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
private func syncOptions(_ p: UnsafeRawPointer) throws(OptimistError) -> (SyncOptions, CCallback<optimist_sync_listener>?) {
    typealias O = optimist_sync_options
    let version = try optionsVersion(p, struct: "optimist_sync_options", newest: OPTIMIST_SYNC_OPTIONS_VERSION,
                                     initMacro: "OPTIMIST_SYNC_OPTIONS_INIT")
    let url = try optionalText(member(p, \O.url), "url")
    let headers = try syncHeaders(member(p, \O.headers))
    let transport = member(p, \O.transport).map {
        HostTransport(fn: $0, context: member(p, \O.transport_ctx))
    }
    let listener = member(p, \O.on_status).map {
        CCallback($0, ctx: member(p, \O.status_ctx))
    }
    var options = SyncOptions(
        url: url, transport: transport, headers: headers,
        pullIntervalMs: member(p, \O.pull_interval_ms),
        maxBatch: Int(member(p, \O.max_batch)),
        timeoutMs: member(p, \O.timeout_ms),
        backoffBaseMs: member(p, \O.backoff_base_ms),
        backoffMaxMs: member(p, \O.backoff_max_ms))
    if version >= 2 {
        let events: Int32 = member(p, \O.events)
        guard events == 0 || events == 1 else { throw .misuse("optimist_sync_options.events must be 0 or 1 (got \(events))") }
        options.events = events == 1
    }
    return (options, listener)
}

@_cdecl("optimist_sync_start")
public func optimist_sync_start(_ handle: OpaquePointer?, _ opts: UnsafePointer<optimist_sync_options>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            guard let opts else { throw .misuse("opts is NULL (use OPTIMIST_SYNC_OPTIONS_INIT)") }
            var (options, listener) = try syncOptions(UnsafeRawPointer(opts))
            if let listener { options.onStatus = { listener.deliver($0) } }
            try s.startSync(options)
        }
    }
}

@_cdecl("optimist_sync_stop")
public func optimist_sync_stop(_ handle: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in try withStore(handle) { s in s.stopSync() } }
}

@_cdecl("optimist_sync_now")
public func optimist_sync_now(_ handle: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in try withStore(handle) { s throws(OptimistError) in try s.syncNow() } }
}

@_cdecl("optimist_sync_set_headers")
public func optimist_sync_set_headers(_ handle: OpaquePointer?, _ headers: UnsafePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            try s.setSyncHeaders(try syncHeaders(headers))
        }
    }
}

@_cdecl("optimist_sync_wait_idle")
public func optimist_sync_wait_idle(_ handle: OpaquePointer?, _ timeoutMs: Int64, _ outIdle: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outIdle, "out_idle")
            guard timeoutMs >= 0 else { throw .misuse("timeout_ms must not be negative") }
            // The wait adds the timeout to the clock: keep the sum from overflowing (INT64_MAX
            // means "as long as it takes" all the same).
            out.pointee = try s.waitForSyncIdle(timeoutMs: min(timeoutMs, Int64.max / 4)) ? 1 : 0
        }
    }
}

@_cdecl("optimist_sync_status")
public func optimist_sync_status(_ handle: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outJSON, "out_json")
            out.pointee = try handOut(JSONWriter.string(s.syncStatus.json))
        }
    }
}
