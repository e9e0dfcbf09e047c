#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex: the store's two locks.
///
/// pthread's rather than the standard library's `Mutex` because ThreadSanitizer sees it:
/// TSan intercepts `pthread_mutex_lock`, but on Linux it does not see the happens-before
/// edges of `Mutex` (its atomics are compiled without instrumentation), so under TSan every
/// access guarded by a `Mutex` is reported as a race and a real one would drown. The
/// uncontended cost is one libc call each way.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always) package func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
