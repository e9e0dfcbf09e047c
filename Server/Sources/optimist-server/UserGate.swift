import Synchronization

/// At most `limit` sync requests of one user in flight at once (`--per-user-concurrency`), so
/// that one user's flood cannot take every connection of the database pool and starve the
/// others. A request over the limit waits, first come first served, up to `wait` for a slot,
/// then gets 429 with Retry-After (the client backs off). The wait absorbs the short bursts of
/// one user's several devices; the bound keeps a flood from piling up.
final class UserGate: Sendable {
    let limit: Int
    let wait: Duration

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Slots {
        var inFlight = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var users: [String: Slots] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    init(limit: Int, wait: Duration) {
        self.limit = limit
        self.wait = wait
    }

    /// Runs `body` holding one of `user`'s slots; nil when none came free in time.
    func run<R>(_ user: String, _ body: () async throws -> R) async rethrows -> R? {
        guard await enter(user) else { return nil }
        defer { leave(user) }
        return try await body()
    }

    private func enter(_ user: String) async -> Bool {
        await withCheckedContinuation { continuation in
            let waiter: Int? = state.withLock { s in
                if s.users[user, default: Slots()].inFlight < limit {
                    s.users[user, default: Slots()].inFlight += 1
                    return nil
                }
                s.nextWaiter += 1
                s.users[user, default: Slots()].waiters.append(Waiter(id: s.nextWaiter, continuation: continuation))
                return s.nextWaiter
            }
            guard let waiter else { return continuation.resume(returning: true) }
            let wait = self.wait
            Task {
                try? await Task.sleep(for: wait)
                self.expire(user, waiter)
            }
        }
    }

    /// Hands the slot to the first waiter, if any (its count stays), or frees it.
    private func leave(_ user: String) {
        let next: Waiter? = state.withLock { s in
            guard var slots = s.users[user] else { return nil }
            if !slots.waiters.isEmpty {
                let first = slots.waiters.removeFirst()
                s.users[user] = slots
                return first
            }
            slots.inFlight -= 1
            s.users[user] = slots.inFlight > 0 ? slots : nil
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    private func expire(_ user: String, _ id: Int) {
        let gone: Waiter? = state.withLock { s in
            guard let i = s.users[user]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.users[user]?.waiters.remove(at: i)
        }
        gone?.continuation.resume(returning: false)
    }
}
