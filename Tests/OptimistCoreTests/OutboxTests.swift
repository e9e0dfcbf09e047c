import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct OutboxTests {
    let s = Store()

    @Test func handsOutTheOldestDueMutationAndMarksItInflight() throws {
        let a = try s.mutate([put("q", "a", [:])])
        let b = try s.mutate([put("q", "b", [:])])
        let first = try #require(try s.outboxNext(now: 0))
        #expect(first.id == a && first.ops == [put("q", "a", [:])] && first.attempts == 1)
        #expect(try s.status(a) == .inflight)
        #expect(try s.outboxNext(now: 0)?.id == b)
        #expect(try s.outboxNext(now: 0) == nil)
    }

    @Test func transientFailuresComeBackAfterJitteredExponentialBackoff() throws {
        s.retryPolicy = RetryPolicy(maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 8000)
        let a = try s.mutate([put("q", "a", [:])])
        var now: Int64 = 0
        for attempt in 1...6 {
            #expect(try s.outboxNext(now: now)?.id == a)
            try s.fail(a, transient: true, reason: "timeout", now: now)
            let full = min(Int64(1000) << (attempt - 1), 8000)
            let at = try s.mutation(a).nextAttemptAt
            #expect(at >= now + full / 2 && at <= now + full, "attempt \(attempt): due at \(at - now) ms")
            #expect(try s.outboxNext(now: at - 1) == nil)
            now = at
        }
        #expect(try s.mutation(a).lastError == "timeout")
    }

    @Test func retryLimitRollsBackByDefault() throws {
        s.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10)
        try s.serverApply([put("q", "a", ["v": 0])])
        let a = try s.mutate([put("q", "a", ["v": 1])])
        let other = try s.mutate([put("q", "b", ["v": 1])])
        _ = try s.outboxNext(now: 0)
        try s.fail(a, transient: true, now: 0)
        #expect(try s.status(a) == .pending)
        // Oldest first: the retried mutation goes before the newer one.
        #expect(try s.outboxNext(now: 10)?.id == a)
        #expect(try s.outboxNext(now: 10)?.id == other)
        try s.fail(a, transient: true, now: 10)
        #expect(try s.status(a) == .rolledBack)
        #expect(try s.get("q", "a") == ["v": 0])
        #expect(try s.get("q", "b") == ["v": 1])
    }

    @Test func keepPolicyLeavesTheMutationVisibleUntilRetryOrRollback() throws {
        let a = try s.mutate([put("q", "a", ["v": 1])], policy: .keep)
        _ = try s.outboxNext(now: 0)
        try s.fail(a, transient: false, reason: "422", now: 0)
        #expect(try s.status(a) == .failed)
        #expect(try s.get("q", "a") == ["v": 1])
        #expect(try s.isPending("q", "a"))
        #expect(try s.outboxNext(now: 1_000_000) == nil)
        #expect(throws: OptimistError.self) { try s.fail(a, transient: true, now: 0) }
        try s.retry(a)
        #expect(try s.status(a) == .pending)
        #expect(try s.outboxNext(now: 0)?.id == a)
        #expect(throws: OptimistError.self) { try s.retry(a) }
        try s.fail(a, transient: false, now: 0)
        try s.rollback(a)
        #expect(try s.get("q", "a") == nil)
    }

    @Test func commitAndRollbackWorkInEveryLiveStatus() throws {
        let a = try s.mutate([put("q", "a", [:])])
        let b = try s.mutate([put("q", "b", [:])], policy: .keep)
        _ = try s.outboxNext(now: 0)
        try s.commit(a)
        try s.fail(b, transient: false, now: 0)
        try s.commit(b)
        #expect(try s.status(b) == .committed)
        #expect(try s.outboxNext(now: 0) == nil)
    }

    @Test func unknownIDs() {
        #expect(throws: OptimistError.notFound("no mutation 5")) { try s.fail(5, transient: true, now: 0) }
        #expect(throws: OptimistError.notFound("no mutation 5")) { try s.retry(5) }
    }
}
