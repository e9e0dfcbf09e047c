#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistModel
import OptimistOpen

/// The tap (mutate, then roll back at once), 100k times on a file-backed store: throughput and
/// the file's size afterwards, printed for the record (never asserted). What is asserted is
/// that every tap is still rolled back after a reopen.
@Suite struct TapPerformanceTests {
    static let count = 100_000

    func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    /// CPU time in ms of all the process's threads (the app thread and the writer), and of
    /// the calling (app) thread alone.
    func cpuMs() -> (all: Int64, app: Int64) {
        var all = timespec(), app = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &all)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &app)
        return (Int64(all.tv_sec) * 1000 + Int64(all.tv_nsec) / 1_000_000, Int64(app.tv_sec) * 1000 + Int64(app.tv_nsec) / 1_000_000)
    }

    func cpuText(since start: (all: Int64, app: Int64)) -> String {
        let now = cpuMs()
        return "CPU \(now.all - start.all) ms (app thread \(now.app - start.app) ms, others \(now.all - start.all - (now.app - start.app)) ms)"
    }

    @Test func manyTapsStayRolledBackAndSmall() throws {
        let dir = TempDir()
        let path = dir.file("taps.db")
        let s = try Store.open(path: path)
        let t = monotonicMs(), cpu = cpuMs()
        var first: MutationID = 0, last: MutationID = 0
        for i in 0..<Self.count {
            let id = try s.mutate([.put(collection: "todos", key: "t", value: ["n": .number(Double(i))])])
            try s.rollback(id)
            if i == 0 { first = id }
            last = id
        }
        try s.flush()
        let elapsed = monotonicMs() - t, cpuUsed = cpuText(since: cpu)
        try s.close()
        let bytes = fileSize(path) + fileSize(path + "-wal")
        let t2 = monotonicMs()
        try withStore(path) { r throws in
            let reopenMs = monotonicMs() - t2
            #expect(try r.pendingCount() == 0)
            #expect(try r.get("todos", "t") == nil)
            for id in stride(from: first, through: last, by: 997) { #expect(try r.status(id) == .rolledBack) }
            #expect(try r.status(last) == .rolledBack)
            print("perf: \(Self.count) taps (mutate + rollback) + flush \(elapsed) ms = \(elapsed > 0 ? Int64(Self.count) * 1000 / elapsed : 0) taps/s, \(cpuUsed); file \(bytes) bytes; reopen \(reopenMs) ms")
        }
    }

    /// Each tap written on its own (a flush after each): the writer's per-batch cost.
    @Test func tapThenFlushEachTime() throws {
        let dir = TempDir()
        let path = dir.file("each.db")
        let n = 2_000
        var ids: [MutationID] = []
        try withStore(path) { (s: Store) throws in
            let t = monotonicMs(), cpu = cpuMs()
            for i in 0..<n {
                let id = try s.mutate([.put(collection: "todos", key: "t", value: ["n": .number(Double(i))])])
                if i % 2 == 0 { try s.commit(id) } else { try s.rollback(id) }
                try s.flush()
                ids.append(id)
            }
            let elapsed = monotonicMs() - t, cpuUsed = cpuText(since: cpu)
            print("perf: \(n) x (tap + flush) \(elapsed) ms = \(elapsed > 0 ? Int64(n) * 1000 / elapsed : 0) taps/s, \(cpuUsed)")
        }
        try withStore(path) { (r: Store) throws in
            for (i, id) in ids.enumerated() { #expect(try r.status(id) == (i % 2 == 0 ? .committed : .rolledBack)) }
        }
    }
}
