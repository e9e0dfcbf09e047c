import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OptimistModel
import OptimistSync

/// The sync's HTTP transport over `URLSession`: the default on Apple platforms (where the
/// library links no libcurl), and available everywhere Foundation is, to reuse an app's own
/// session (its configuration, proxies, cookies, protocol classes).
///
/// ```swift
/// var options = SyncOptions(url: "https://sync.example.com")
/// options.transport = URLSessionTransport()          // or URLSessionTransport(configuration: myConfig)
/// try store.startSync(options)
/// ```
///
/// Each request is one `POST` with the sync's JSON body, its headers and
/// `Content-Type: application/json`, and the request's timeout. Redirects are not followed (the
/// sync reports the 3xx, as with libcurl). A reply body over `maxBodyBytes` is refused (the
/// sync tries again later), and a stopping sync cancels the request in flight.
public final class URLSessionTransport: SyncTransport, @unchecked Sendable {
    /// The largest reply body taken, in bytes.
    public let maxBodyBytes: Int
    private let session: URLSession

    /// A transport with a session of its own, made from `configuration` (default: an ephemeral
    /// one: the sync keeps no cookies or cache).
    public init(configuration: URLSessionConfiguration = .ephemeral, maxBodyBytes: Int = 64 << 20) {
        self.maxBodyBytes = maxBodyBytes
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .unreachable("not an http(s) URL: \(request.url)")
        }
        var r = URLRequest(url: url)
        r.httpMethod = "POST"
        r.httpBody = Data(request.body.utf8)
        r.timeoutInterval = Double(max(1, request.timeoutMs)) / 1000
        r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for h in request.headers { r.setValue(h.value, forHTTPHeaderField: h.name) }

        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let task = session.dataTask(with: r) { data, response, error in
            outcome.set(data, response, error)
            done.signal()
        }
        task.resume()
        // Waited in slices, so a stopping sync cancels the request within one.
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if cancelled() { task.cancel() }
        }
        let (data, response, error) = outcome.get()
        if let error { return .unreachable("\(error.localizedDescription) (\(request.url))") }
        guard let http = response as? HTTPURLResponse else {
            return .unreachable("no HTTP reply (\(request.url))")
        }
        let body = data ?? Data()
        guard body.count <= maxBodyBytes else {
            return .unreachable("the reply (HTTP \(http.statusCode)) is over \(maxBodyBytes) bytes (\(request.url))")
        }
        return .http(status: http.statusCode, body: String(decoding: body, as: UTF8.self),
                     retryAfterMs: http.value(forHTTPHeaderField: "Retry-After").flatMap { SyncReply.retryAfterMs(headerValue: $0.utf8) })
    }

}

// MARK: The event stream

extension URLSessionTransport: SyncEventSource {
    /// `GET {url}/events` as a data task of a session of its own (this transport's
    /// configuration, its own delegate), whose delegate hands the reply's head and bytes to the
    /// stream's thread as they arrive; that thread calls `receive`. A cancel cancels the task
    /// and wakes the thread at once. URLSession has no connect timeout of its own: the reply's
    /// head must come within `connectTimeoutMs`; after it, the stream has no timeout (the
    /// sync's silence limit watches it).
    public func openStream(_ request: SyncStreamRequest, cancellation: SyncStreamCancellation,
                           receive: (SyncStreamPart) -> Void) {
        // Not an http(s) URL: no answer (the sync tries again after a wait, and polls).
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return
        }
        var r = URLRequest(url: url)
        r.httpMethod = "GET"
        // The idle timeout between bytes: a day, so that the silence limit decides.
        r.timeoutInterval = 86_400
        r.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        r.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        for h in request.headers { r.setValue(h.value, forHTTPHeaderField: h.name) }

        let inbox = StreamInbox()
        let streamSession = URLSession(configuration: session.configuration, delegate: StreamDelegate(inbox), delegateQueue: nil)
        defer { streamSession.invalidateAndCancel() }
        let task = streamSession.dataTask(with: r)
        guard cancellation.onCancel({
            task.cancel()
            inbox.wake()
        }) else { return }
        defer { cancellation.onCancel(nil) }
        task.resume()
        let connectBy = Date().addingTimeInterval(Double(max(1, request.connectTimeoutMs)) / 1000)
        var answered = false
        // Until the task completed (the server ended the reply, or it failed: either way the
        // sync opens another stream after a wait), the stream is cancelled, or no head came
        // in time.
        while true {
            let (parts, done) = inbox.take(waitingUntil: Date().addingTimeInterval(0.25))
            for part in parts {
                if cancellation.isCancelled { break }
                if case .response = part { answered = true }
                receive(part)
            }
            if done || cancellation.isCancelled || (!answered && Date() >= connectBy) {
                task.cancel()
                return
            }
        }
    }
}

/// A stream's reply, handed from the session's delegate queue to the stream's thread: parts
/// in order, then the task's end.
private final class StreamInbox: @unchecked Sendable {
    private let condition = NSCondition()
    private var parts: [SyncStreamPart] = []
    /// The task completed.
    private var done = false
    private var woken = false

    func add(_ part: SyncStreamPart) {
        condition.lock()
        parts.append(part)
        condition.broadcast()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }

    func wake() {
        condition.lock()
        woken = true
        condition.broadcast()
        condition.unlock()
    }

    /// The parts that arrived, and whether the task completed (after them); waits until
    /// `deadline` for either.
    func take(waitingUntil deadline: Date) -> ([SyncStreamPart], Bool) {
        condition.lock()
        defer { condition.unlock() }
        while parts.isEmpty && !done && !woken {
            if !condition.wait(until: deadline) { break }
        }
        woken = false
        let taken = parts
        parts.removeAll()
        return (taken, done)
    }
}

/// The stream session's delegate: the head, the bytes and the end go to the inbox; redirects
/// are refused (the 3xx itself is the reply).
private final class StreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let inbox: StreamInbox
    init(_ inbox: StreamInbox) { self.inbox = inbox }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse {
            inbox.add(.response(SyncStreamResponse(
                status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"),
                retryAfterMs: http.value(forHTTPHeaderField: "Retry-After").flatMap { SyncReply.retryAfterMs(headerValue: $0.utf8) })))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        inbox.add(.data([UInt8](data)))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        inbox.finish()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

/// One reply, handed from the session's delegate queue to the sync's thread.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)
    func set(_ d: Data?, _ r: URLResponse?, _ e: (any Error)?) { lock.withLock { value = (d, r, e) } }
    func get() -> (Data?, URLResponse?, (any Error)?) { lock.withLock { value } }
}

/// Refuses redirects: the 3xx itself is the reply.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
