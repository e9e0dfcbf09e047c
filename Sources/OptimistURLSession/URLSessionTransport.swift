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
