#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with one condition variable: what the store's callers and the writer
/// thread use to hand over work and wait for it (Foundation and Dispatch are kept out of the
/// library on purpose).
package final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always) package func locked<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for a broadcast (the mutex must be held).
    package func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a broadcast or until `milliseconds` pass (the mutex must be held).
    package func wait(milliseconds: Int) {
        #if canImport(Glibc)
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        let ns = Int(t.tv_nsec) + (milliseconds % 1000) * 1_000_000
        t.tv_sec += milliseconds / 1000 + ns / 1_000_000_000
        t.tv_nsec = ns % 1_000_000_000
        pthread_cond_timedwait(cond, mutex, &t)
        #else
        var t = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        pthread_cond_timedwait_relative_np(cond, mutex, &t)
        #endif
    }

    package func broadcast() { pthread_cond_broadcast(cond) }
}

/// Starts `body` on a new pthread and returns a handle to join it.
package func startThread(_ body: @escaping () -> Void) -> pthread_t? {
    final class Box { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    #if canImport(Glibc)
    var thread = pthread_t()
    #else
    var thread: pthread_t?
    #endif
    let rc = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        box.body()
        return nil
    }, context)
    guard rc == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        return nil
    }
    return thread
}

/// Milliseconds on the monotonic clock (not wall time: it never jumps back), for timeouts and
/// the sync's schedule.
package func monotonicMilliseconds() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}

/// Joins a thread started by ``startThread(_:)``.
package func joinThread(_ thread: pthread_t) {
    pthread_join(thread, nil)
}
