import OptimistCore
#if canImport(OptimistCurl)
import OptimistCurl
#else
import OptimistURLSession
#endif
import OptimistModel
import OptimistSync
import OptimistThreads

extension Store {
    /// Starts the store's sync: it pushes the outbox and pulls the server's changes by itself,
    /// on a thread the library owns, until ``/OptimistSync/OptimistCore/Store/stopSync()`` or
    /// ``/OptimistCore/Store/close()``. Without `options.transport`, requests go over HTTP to
    /// `options.url` through the system libcurl on Linux, and `URLSession` on Apple platforms.
    ///
    /// - Throws: `.misuse` when a sync already runs or an option is bad.
    public func startSync(_ options: SyncOptions) throws(OptimistError) {
        #if canImport(OptimistCurl)
        try startSync(options, defaultTransport: CurlTransport(maxBodyBytes: options.maxResponseBytes), clock: monotonicMilliseconds)
        #else
        try startSync(options, defaultTransport: URLSessionTransport(maxBodyBytes: options.maxResponseBytes), clock: monotonicMilliseconds)
        #endif
    }
}
