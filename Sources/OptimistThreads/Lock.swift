#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A pthread mutex (adaptive, on Linux): the store's two locks, and the read cache's and view
/// directory's.
///
/// pthread's rather than the standard library's `Mutex` because ThreadSanitizer sees it:
/// TSan intercepts `pthread_mutex_lock`, but on Linux it does not see the happens-before
/// edges of `Mutex` (its atomics are compiled without instrumentation), so under TSan every
/// access guarded by a `Mutex` is reported as a race and a real one would drown. The
/// uncontended cost is one libc call each way.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    /// - Parameter spins: how many times a caller of ``lockAsReader()`` or
    ///   ``lockedYielding(_:)`` that finds the lock taken yields and retries before it
    ///   sleeps; each yield costs about a microsecond when the CPU has nothing else to run.
    ///   0: it waits for the lock at once (the adaptive mutex's own few microseconds of
    ///   retries, then a sleep).
    package init(spins: Int = 0) {
        self.spins = spins
        var attr = pthread_mutexattr_t()
        pthread_mutexattr_init(&attr)
        #if canImport(Glibc)
        // Adaptive: a thread that finds it taken tries again for a few microseconds before it
        // sleeps, which covers most holds (a tap, a read-cache probe) without the futex sleep
        // and wake-up: a reader that misses the cache beside taps sleeps far less often, and
        // fewer of its gets wait over a millisecond beside big batches (BENCHMARKS.md, past
        // rounds: 6d07692). Free when the lock is free.
        // glibc's PTHREAD_MUTEX_ADAPTIVE_NP, which Glibc does not import (a GNU extension).
        pthread_mutexattr_settype(&attr, 3)
        #endif
        pthread_mutex_init(mutex, &attr)
        pthread_mutexattr_destroy(&attr)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }

    /// Readers blocked in ``lockAsReader()`` right now.
    private let waitingReaders = Atomic<Int>(0)

    /// ``lock()`` for a reader: the same when the lock is free (one `trylock`); when it is
    /// not, the reader is counted while it waits, so a writer can let it in first (see
    /// ``unlockAsWriter()``).
    @inline(__always) package func lockAsReader() {
        if pthread_mutex_trylock(mutex) == 0 { return }
        waitingReaders.add(1, ordering: .relaxed)
        defer { waitingReaders.subtract(1, ordering: .relaxed) }
        if !acquireYielding() { pthread_mutex_lock(mutex) }
    }

    /// Tries the lock up to ``spins`` times, yielding before each try: true once it holds it.
    ///
    /// A holder keeps the lock for one short step (a staged change's chunk, one tap), well
    /// under ``spins`` yields. Staying runnable until it lets go beats sleeping, because waking
    /// a sleeping thread can take milliseconds on a loaded or virtual machine (an idle CPU
    /// must be woken too), far longer than the step. A yield also hands this CPU to the
    /// holder when the two share one.
    @inline(__always) private func acquireYielding() -> Bool {
        for _ in 0..<spins {
            sched_yield()
            if pthread_mutex_trylock(mutex) == 0 { return true }
        }
        return false
    }

    /// See ``init(spins:)``.
    private let spins: Int

    /// ``unlock()`` for a writer about to take the lock again (a staged change's next step, a
    /// writer in a loop): readers that queued behind it get in first. A pthread mutex is not
    /// fair: without this, a writer that unlocks and relocks at once wins every time against a
    /// reader that has to wake up first, and the reader waits for all the steps.
    @inline(__always) package func unlockAsWriter() {
        pthread_mutex_unlock(mutex)
        guard waitingReaders.load(ordering: .relaxed) > 0 else { return }
        // Bounded: a stream of readers must not stall the writer for ever.
        var spins = 0
        while waitingReaders.load(ordering: .relaxed) > 0, spins < 2000 {
            sched_yield()
            spins += 1
        }
    }

    /// ``locked(_:)``, waiting as ``lockAsReader()`` does (yielding before it sleeps) but not
    /// counted as a reader: for writers taking turns on a lock they each hold briefly.
    @inline(__always) package func lockedYielding<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        if pthread_mutex_trylock(mutex) != 0, !acquireYielding() { pthread_mutex_lock(mutex) }
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    @inline(__always) package func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
