import OptimistModel
import OptimistThreads
import Synchronization

/// Wakes the threads that wait for the store to change (``Store/waitSettled(_:timeoutMs:)``,
/// ``Store/outboxWait(timeoutMs:)``): every change ends by ``changed()``, which costs one
/// atomic load while nobody waits.
///
/// A waiter takes the ``generation`` first, then reads the store (under the state lock), and
/// sleeps only while the generation is the one it took. A change moves the generation after
/// its publish; a waiter that read the store before that publish registered (``waiters``)
/// before its read, which the state lock orders before the change's check of ``waiters``. So
/// no change falls between a waiter's read and its sleep unheard.
final class ChangeSignal: Sendable {
    private let monitor = Monitor()
    nonisolated(unsafe) private var count: UInt64 = 0
    private let waiters = Atomic<Int>(0)

    /// After a change: wakes the waiters, if any.
    @inline(__always) func changed() {
        if waiters.load(ordering: .acquiring) > 0 { wakeAll() }
    }

    /// Wakes every waiter, to look again (a change, the store's close, a cancelled task).
    func wakeAll() {
        monitor.locked {
            count &+= 1
            monitor.broadcast()
        }
    }

    /// Runs `check` until it returns a value, waking after each change, for up to `timeoutMs`
    /// (negative: no limit); nil when the time passed first or `stop` said so.
    func wait<R>(timeoutMs: Int64, stop: () -> Bool = { false },
                 _ check: () throws(OptimistError) -> R?) throws(OptimistError) -> R? {
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer { waiters.subtract(1, ordering: .sequentiallyConsistent) }
        let deadline = timeoutMs < 0 ? Int64.max : monotonicMilliseconds() &+ timeoutMs
        while true {
            let seen = monitor.locked { count }
            if let r = try check() { return r }
            if stop() { return nil }
            let left = deadline == Int64.max ? Int64.max : deadline - monotonicMilliseconds()
            if left <= 0 { return nil }
            monitor.locked {
                // Slices of a minute at most: a timed wait's arithmetic stays small.
                if count == seen { monitor.wait(milliseconds: Int(min(left, 60_000))) }
            }
        }
    }
}
