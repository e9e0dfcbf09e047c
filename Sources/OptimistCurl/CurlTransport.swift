import CCurl
import OptimistSync
import OptimistModel
import Synchronization

/// The built-in transport: HTTP/1.1 POSTs through the system's libcurl (no Foundation).
///
/// One easy handle per request keeps it simple and thread-safe; the sync sends one request
/// at a time, so connection reuse would save little next to a request's own round trip.
/// A reply body over `maxBodyBytes` is cut off (the sync then reports a protocol error),
/// and a cancelled sync aborts the transfer from curl's progress callback.
public struct CurlTransport: SyncTransport {
    public var maxBodyBytes: Int

    public init(maxBodyBytes: Int = 64 << 20) {
        self.maxBodyBytes = maxBodyBytes
        CurlTransport.globalInit
    }

    /// `curl_global_init` is not thread-safe: run it once, before any handle (a Swift global
    /// is initialised exactly once).
    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        guard let h = curl_easy_init() else { return .unreachable("curl: cannot make a handle") }
        defer { curl_easy_cleanup(h) }
        return withoutActuallyEscaping(cancelled) { cancelled in
            let sink = Sink(limit: maxBodyBytes, cancelled: cancelled)
            let context = Unmanaged.passUnretained(sink).toOpaque()
            var headers: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headers) }
            headers = curl_slist_append(headers, "Content-Type: application/json")
            headers = curl_slist_append(headers, "Expect:")  // no 100-continue round trip
            for header in request.headers { headers = curl_slist_append(headers, "\(header.name): \(header.value)") }

            let body = Array(request.body.utf8)
            let code: CURLcode = body.withUnsafeBufferPointer { b in
                request.url.withCString { url in
                    _ = optimist_curl_set_ptr(h, CURLOPT_URL, url)
                    _ = optimist_curl_set_long(h, CURLOPT_POST, 1)
                    _ = optimist_curl_set_ptr(h, CURLOPT_POSTFIELDS, b.baseAddress)
                    _ = optimist_curl_set_size(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(b.count))
                    _ = optimist_curl_set_ptr(h, CURLOPT_HTTPHEADER, headers)
                    _ = optimist_curl_set_long(h, CURLOPT_TIMEOUT_MS, Int(max(1, min(request.timeoutMs, Int64(Int32.max)))))
                    _ = optimist_curl_set_long(h, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(request.timeoutMs, 10_000))))
                    _ = optimist_curl_set_long(h, CURLOPT_NOSIGNAL, 1)  // threads: no SIGALRM for timeouts
                    _ = optimist_curl_set_long(h, CURLOPT_FOLLOWLOCATION, 0)
                    _ = optimist_curl_set_ptr(h, CURLOPT_WRITEDATA, context)
                    _ = optimist_curl_set_write(h, { data, size, count, ctx in
                        Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue().take(data, size * count)
                    })
                    _ = optimist_curl_set_ptr(h, CURLOPT_HEADERDATA, context)
                    _ = optimist_curl_set_header_fn(h, { data, size, count, ctx in
                        Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue().header(data, size * count)
                    })
                    _ = optimist_curl_set_long(h, CURLOPT_NOPROGRESS, 0)
                    _ = optimist_curl_set_ptr(h, CURLOPT_XFERINFODATA, context)
                    _ = optimist_curl_set_progress(h, { ctx, _, _, _, _ in
                        Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue().cancelled() ? 1 : 0
                    })
                    return curl_easy_perform(h)
                }
            }
            if code == CURLE_WRITE_ERROR && sink.overflowed {
                // Cut off on purpose: nothing of it is applied, and the request is tried again.
                return .unreachable("the reply (HTTP \(sink.status(h))) is over \(maxBodyBytes) bytes (\(request.url))")
            }
            guard code == CURLE_OK, sink.headersEnded else {
                if code == CURLE_OK {
                    return .unreachable("the connection closed inside the reply's headers (\(request.url))")
                }
                let text = curl_easy_strerror(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                return .unreachable("\(text) (\(request.url))")
            }
            return .http(status: sink.status(h), body: String(decoding: sink.body, as: UTF8.self), retryAfterMs: sink.retryAfterMs)
        }
    }
}

/// Collects one reply: its body up to a limit, and the `Retry-After` header.
private final class Sink {
    var body: [UInt8] = []
    var retryAfterMs: Int64?
    var overflowed = false
    /// The blank line that ends a reply's headers arrived: without it (a connection closed
    /// inside the headers) curl may report success with a status and no body.
    var headersEnded = false
    let limit: Int
    let cancelled: () -> Bool

    init(limit: Int, cancelled: @escaping () -> Bool) {
        self.limit = limit
        self.cancelled = cancelled
    }

    func take(_ data: UnsafeMutablePointer<CChar>?, _ n: Int) -> Int {
        guard let data, n > 0 else { return 0 }
        guard body.count + n <= limit else {
            overflowed = true
            return 0  // anything but n aborts the transfer
        }
        data.withMemoryRebound(to: UInt8.self, capacity: n) { body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
        return n
    }

    /// Header lines arrive one by one; only `Retry-After: <seconds>` matters here (an HTTP
    /// date is taken as no hint: the sync's own backoff then applies).
    func header(_ data: UnsafeMutablePointer<CChar>?, _ n: Int) -> Int {
        guard let data else { return 0 }
        data.withMemoryRebound(to: UInt8.self, capacity: n) { p in
            let line = UnsafeBufferPointer(start: p, count: n)
            if n <= 2, line.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) {
                headersEnded = true
                return
            }
            headersEnded = false  // a later header block (after 100 Continue) starts again
            let name = Array("retry-after:".utf8)
            guard n > name.count, zip(line, name).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else { return }
            if let ms = SyncReply.retryAfterMs(headerValue: line.dropFirst(name.count)) { retryAfterMs = ms }
        }
        return n
    }

    func status(_ h: UnsafeMutableRawPointer) -> Int {
        var code = 0
        _ = optimist_curl_get_long(h, CURLINFO_RESPONSE_CODE, &code)
        return code
    }
}

// MARK: The event stream

extension CurlTransport: SyncEventSource {
    /// `GET {url}/events` through curl's multi interface: the stream's thread waits in
    /// `curl_multi_poll` (a second at most, then it looks at the cancellation, which also
    /// carries the silence limit), and a cancel from another thread wakes that wait at once
    /// (`curl_multi_wakeup`), so stopping the sync never waits for a quiet stream. The body
    /// goes to `receive` as it arrives, whatever the status (an error's body says why).
    public func openStream(_ request: SyncStreamRequest, cancellation: SyncStreamCancellation,
                           receive: (SyncStreamPart) -> Void) {
        guard let h = curl_easy_init() else { return }
        defer { curl_easy_cleanup(h) }
        guard let multi = curl_multi_init() else { return }
        defer { curl_multi_cleanup(multi) }
        withoutActuallyEscaping(receive) { receive in
            let sink = StreamSink(receive: receive, cancellation: cancellation)
            let context = Unmanaged.passUnretained(sink).toOpaque()
            var headers: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headers) }
            headers = curl_slist_append(headers, "Accept: text/event-stream")
            headers = curl_slist_append(headers, "Cache-Control: no-cache")
            for header in request.headers { headers = curl_slist_append(headers, "\(header.name): \(header.value)") }
            request.url.withCString { url in
                _ = optimist_curl_set_ptr(h, CURLOPT_URL, url)
                _ = optimist_curl_set_long(h, CURLOPT_HTTPGET, 1)
                _ = optimist_curl_set_ptr(h, CURLOPT_HTTPHEADER, headers)
                _ = optimist_curl_set_long(h, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(request.connectTimeoutMs, Int64(Int32.max)))))
                _ = optimist_curl_set_long(h, CURLOPT_NOSIGNAL, 1)
                _ = optimist_curl_set_long(h, CURLOPT_FOLLOWLOCATION, 0)
                // A peer gone without a word is also found by the silence limit; keepalive
                // probes find it sooner where the system's settings allow.
                _ = optimist_curl_set_long(h, CURLOPT_TCP_KEEPALIVE, 1)
                _ = optimist_curl_set_ptr(h, CURLOPT_WRITEDATA, context)
                _ = optimist_curl_set_write(h, { data, size, count, ctx in
                    Unmanaged<StreamSink>.fromOpaque(ctx!).takeUnretainedValue().take(data, size * count)
                })
                _ = optimist_curl_set_ptr(h, CURLOPT_HEADERDATA, context)
                _ = optimist_curl_set_header_fn(h, { data, size, count, ctx in
                    Unmanaged<StreamSink>.fromOpaque(ctx!).takeUnretainedValue().header(data, size * count)
                })
                sink.handle = h
                guard curl_multi_add_handle(multi, h) == CURLM_OK else { return }
                defer { _ = curl_multi_remove_handle(multi, h) }
                let wake = MultiHandle(pointer: multi)
                guard cancellation.onCancel({ _ = curl_multi_wakeup(wake.pointer) }) else { return }
                // Before the multi handle goes: no wakeup can be running or come after this.
                defer { cancellation.onCancel(nil) }
                // Until the transfer ends (the server closed it, or it failed: either way the
                // sync opens another after a wait) or the stream is cancelled.
                while !cancellation.isCancelled {
                    var running: Int32 = 0
                    guard curl_multi_perform(multi, &running) == CURLM_OK, running > 0, !cancellation.isCancelled else { return }
                    _ = curl_multi_poll(multi, nil, 0, 1_000, nil)
                }
            }
        }
    }
}

/// A multi handle, for the wakeup a cancel sends from another thread (`curl_multi_wakeup` is
/// the one multi call libcurl allows from any thread; the handle outlives every such call).
private struct MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// Hands a stream's reply to `receive`: the head once its header block ended (its status, and
/// its `Content-Type` and `Retry-After`), then the body's bytes.
private final class StreamSink {
    let receive: (SyncStreamPart) -> Void
    let cancellation: SyncStreamCancellation
    var handle: UnsafeMutableRawPointer?
    var contentType: String?
    var retryAfterMs: Int64?
    /// The head was handed over (before it, no body byte goes to `receive`).
    var answered = false

    init(receive: @escaping (SyncStreamPart) -> Void, cancellation: SyncStreamCancellation) {
        self.receive = receive
        self.cancellation = cancellation
    }

    func take(_ data: UnsafeMutablePointer<CChar>?, _ n: Int) -> Int {
        guard let data, n > 0 else { return 0 }
        // Anything but n aborts the transfer.
        guard answered, !cancellation.isCancelled else { return 0 }
        receive(.data(data.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) }))
        return n
    }

    func header(_ data: UnsafeMutablePointer<CChar>?, _ n: Int) -> Int {
        guard let data else { return 0 }
        if cancellation.isCancelled { return 0 }
        let line = data.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) }
        guard !(n <= 2 && line.allSatisfy({ $0 == 0x0D || $0 == 0x0A })) else {
            var code = 0
            if let handle { _ = optimist_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &code) }
            // A 1xx block is followed by the real one.
            if code >= 200 && !answered {
                answered = true
                receive(.response(SyncStreamResponse(status: code, contentType: contentType, retryAfterMs: retryAfterMs)))
            }
            contentType = nil
            retryAfterMs = nil
            return n
        }
        if let v = Self.value(of: "content-type:", in: line) {
            contentType = String(decoding: v.drop { $0 == 0x20 || $0 == 0x09 }.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        } else if let v = Self.value(of: "retry-after:", in: line), let ms = SyncReply.retryAfterMs(headerValue: v) {
            retryAfterMs = ms
        }
        return n
    }

    /// What follows `name` (lowercase, with its colon) when the line is that header.
    private static func value(of name: String, in line: [UInt8]) -> ArraySlice<UInt8>? {
        let n = Array(name.utf8)
        guard line.count > n.count, zip(line, n).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else { return nil }
        return line[n.count...]
    }
}
