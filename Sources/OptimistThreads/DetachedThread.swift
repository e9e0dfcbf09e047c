#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new pthread nobody joins (it releases itself when done): for one blocking
/// call made on behalf of async code. False when the thread could not be started.
package func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    guard let thread = startThread(body) else { return false }
    pthread_detach(thread)
    return true
}
