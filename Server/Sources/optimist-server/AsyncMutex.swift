import Synchronization

/// A lock a task can wait for without blocking its thread: the SQLite writer is held across
/// the awaits of a push, which a plain mutex must not be. Waiters get it in arrival order.
final class AsyncMutex: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func lock() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { s in
                if !s.locked {
                    s.locked = true
                    return true
                }
                s.waiters.append(waiter)
                return false
            }
            if acquired { waiter.resume() }
        }
    }

    func unlock() {
        // Hand the lock straight to the next waiter (it stays locked), so nobody can barge in.
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.locked = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
