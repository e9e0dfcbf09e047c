import Testing
import OptimistCore
import OptimistModel
import OptimistOpen

/// Throughput and reopen time, printed for the record (never asserted: wall-clock limits make
/// flaky tests). What is asserted is that the work was done right.
@Suite struct PerformanceTests {
    static let count = 100_000

    func ms(since start: Int64) -> Int64 { monotonicMs() - start }

    @Test func reopenWithManyPendingMutations() throws {
        let dir = TempDir()
        let path = dir.file("many.db")
        let s = try Store.open(path: path)
        var t = monotonicMs()
        for i in 0..<Self.count {
            try s.mutate([.put(collection: "todos", key: Key("t\(i)"), value: ["title": "todo", "n": .number(Double(i))])])
        }
        let mutateMs = ms(since: t)
        t = monotonicMs()
        try s.flush()
        let flushMs = ms(since: t)
        try s.close()

        t = monotonicMs()
        let r = try Store.open(path: path)
        let reopenMs = ms(since: t)
        defer { try? r.close() }
        #expect(try r.pendingCount() == Self.count)
        #expect(try r.get("todos", "t99999") == ["title": "todo", "n": 99_999])
        #expect(try r.outboxNext(now: 0)?.id == 1)
        let total = mutateMs + flushMs
        print("""
            perf: \(Self.count) mutates \(mutateMs) ms + one flush \(flushMs) ms \
            = \(total > 0 ? Int64(Self.count) * 1000 / total : 0) flushed mutations/s; \
            reopen with \(Self.count) pending: \(reopenMs) ms
            """)
    }

    @Test func mutateThenFlushEachTime() throws {
        let dir = TempDir()
        let path = dir.file("each.db")
        let n = 1_000
        let s = try Store.open(path: path)
        let t = monotonicMs()
        for i in 0..<n {
            try s.mutate([.incr(collection: "c", key: "k", field: "n", delta: 1)], dedupeKey: nil)
            try s.flush()
            _ = i
        }
        let elapsed = ms(since: t)
        try s.close()
        try withStore(path) { r throws in #expect(try r.get("c", "k") == ["n": .number(Double(n))]) }
        print("perf: \(n) x (mutate + flush) \(elapsed) ms = \(elapsed > 0 ? Int64(n) * 1000 / elapsed : 0) flushed mutations/s")
    }
}
