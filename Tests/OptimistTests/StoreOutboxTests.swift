import Foundation
import Synchronization
import Testing
import Optimist

/// `settled(id)` awaits one mutation; `dueMutations()` hands the outbox to the app's own
/// backend as mutations become due, waiting (not polling) in between, and ends on cancel
/// or close.
@Suite struct StoreOutboxTests {
    @Test func settledReturnsTheFinalStatusOnceTheBackendAnswers() async throws {
        let store = Store()
        let ok = try store.mutate([.put(collection: "todos", key: "a", value: ["t": "milk"])])
        let no = try store.mutate([.put(collection: "todos", key: "b", value: ["t": "eggs"])])
        Task.detached {
            try await Task.sleep(for: .milliseconds(30))
            try store.commit(ok)
            try store.rollback(no, reason: "the title is taken")
        }
        #expect(try await store.settled(ok) == .committed)
        #expect(try await store.settled(no) == .rolledBack)
        #expect(try store.mutation(no).lastError == "the title is taken")
        await #expect(throws: OptimistError.notFound("no mutation 99")) { try await store.settled(99) }
    }

    @Test func aCancelledWaitReturnsTheStatusItHasThen() async throws {
        let store = Store()
        let id = try store.mutate([.put(collection: "todos", key: "a", value: [:])])
        let waiting = Task { try await store.settled(id) }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(try await waiting.value == .pending)
    }

    @Test func dueMutationsFeedsTheAppsBackendWithRenamesAndRetries() async throws {
        let store = Store()
        // The app's sender: the first send of each mutation fails once (transient), then the
        // backend creates the record under its own key.
        let sender = Task { () throws -> [MutationID] in
            var sent: [MutationID] = []
            var failedOnce = Set<MutationID>()
            for try await m in store.dueMutations() {
                if failedOnce.insert(m.id).inserted {
                    try store.fail(m.id, transient: true, reason: "offline", now: Store.monotonicNow())
                    continue
                }
                sent.append(m.id)
                guard case .put(let coll, let key, _) = m.ops[0] else { continue }
                try store.commit(m.id, renames: [KeyRename(collection: coll, from: key, to: Key("srv-\(m.id)"))])
                if sent.count == 2 { break }
            }
            return sent
        }
        store.retryPolicy = RetryPolicy(maxAttempts: 5, baseDelayMs: 20, maxDelayMs: 20)
        try await Task.sleep(for: .milliseconds(20))      // the sender waits on an empty outbox
        let a = try store.mutate([.put(collection: "todos", key: "tmp-a", value: ["t": "milk"])])
        let b = try store.mutate([.put(collection: "todos", key: "tmp-b", value: ["t": "eggs"])])
        // Each once, in either order: their retries come due 20 ms after each one's own
        // failure (with the policy's jitter), so a slow machine may hand b out before a.
        #expect(try await sender.value.sorted() == [a, b])
        #expect(try store.get("todos", Key("srv-\(a)")) == ["t": "milk"])
        #expect(try store.get("todos", Key("srv-\(b)")) == ["t": "eggs"])
        #expect(try store.get("todos", "tmp-a") == nil)
        #expect(try store.pendingCount() == 0)
    }

    @Test func dueMutationsEndsOnCancelAndOnClose() async throws {
        let store = Store()
        let idle = Task { () throws -> Int in
            var n = 0
            for try await _ in store.dueMutations() { n += 1 }
            return n
        }
        try await Task.sleep(for: .milliseconds(20))
        idle.cancel()
        #expect(try await idle.value == 0)

        let closing = Task { () throws -> Int in
            var n = 0
            for try await _ in store.dueMutations() { n += 1 }
            return n
        }
        try await Task.sleep(for: .milliseconds(20))
        try store.close()
        #expect(try await closing.value == 0)
    }
}
