import Observation
import Synchronization
import Testing
import Optimist

/// Live records and views notify Observation when the store changes them.
@Suite struct ObservationTests {
    final class Flag: Sendable {
        private let m = Mutex(0)
        func bump() { m.withLock { $0 += 1 } }
        var count: Int { m.withLock { $0 } }
    }

    /// Tracks one read of `read`, then runs `change`: how many notifications came.
    func notifications(_ read: () -> Void, after change: () throws -> Void) rethrows -> Int {
        let flag = Flag()
        withObservationTracking(read) { flag.bump() }
        try change()
        return flag.count
    }

    @Test func aLiveRecordFollowsMutateCommitFailAndRollback() throws {
        let store = Store()
        let live = try store.liveRecord("habits", "run")
        #expect(live.value == nil && live.status == .confirmed)
        #expect(try notifications({ _ = live.value }) {
            _ = try store.mutate([.put(collection: "habits", key: "run", value: ["streak": 1])], policy: .keep)
        } == 1)
        #expect(live.value == ["streak": 1] && live.status == .pending)
        // A kept failure changes the status only.
        #expect(try notifications({ _ = live.status }) {
            _ = try store.outboxNext(now: 0)
            try store.fail(1, transient: false, reason: "no", now: 0)
        } == 1)
        #expect(live.status == .failed && live.value == ["streak": 1])
        // A value read is not bothered by a status change, and vice versa.
        #expect(try notifications({ _ = live.value }) { try store.retry(1) } == 0)
        #expect(live.status == .pending)
        #expect(try notifications({ _ = live.value }) { try store.rollback(1) } == 1)
        #expect(live.value == nil && live.status == .confirmed)
        // Another key of the same prefix does not notify.
        #expect(try notifications({ _ = live.value }) {
            try store.mutate([.put(collection: "habits", key: "running", value: [:])])
        } == 0)
    }

    @Test func aLiveViewFollowsItsRecords() throws {
        let store = Store()
        try store.defineView("done", collection: "logs", prefix: "2026-", kind: .count)
        let live = try store.liveView("done", collection: "logs", prefix: "2026-")
        #expect(live.value == 0)
        #expect(try notifications({ _ = live.value }) {
            try store.mutate([.put(collection: "logs", key: "2026-11-22/run", value: ["done": true])])
        } == 1)
        #expect(live.value == 1)
        #expect(try notifications({ _ = live.value }) {
            try store.mutate([.put(collection: "logs", key: "2025-01-01/run", value: [:])])
        } == 0)
    }

    @Test func aReleasedLiveRecordStopsListening() throws {
        let store = Store()
        var live: LiveRecord? = try store.liveRecord("c", "k")
        _ = live?.value
        live = nil
        try store.mutate([.put(collection: "c", key: "k", value: [:])])   // no listener left to call
        #expect(try store.get("c", "k") == [:])
    }
}
