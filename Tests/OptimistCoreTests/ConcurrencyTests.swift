import Foundation
import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct ConcurrencyTests {
    @Test func manyThreadsOneStore() async throws {
        let s = Store()
        try s.defineView("n", collection: "c", kind: .sum(field: "n"))
        let listened = ChangeLog()
        try s.subscribe(collection: "c") { listened.append($0) }
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<500 {
                        let key = Key("k\(i % 16)")
                        guard let id = try? s.mutate([incr("c", key, "n", 1)]) else { continue }
                        _ = try? s.get("c", key)
                        // Every third is rolled back, the rest committed.
                        if (i + t) % 3 == 0 { try? s.rollback(id) } else { try? s.commit(id) }
                    }
                }
            }
        }
        #expect(try s.pendingCount() == 0)
        var total = 0.0
        for (_, r) in try s.scan("c") { total += r["n"]?.number ?? 0 }
        let committed = (0..<8).reduce(0) { acc, t in acc + (0..<500).filter { ($0 + t) % 3 != 0 }.count }
        #expect(total == Double(committed))
        #expect(try s.viewValue("n") == Double(committed))
        #expect(listened.all.count >= 8 * 500)
    }
}

/// A journal sink whose first `append` is held up until released, and whose `flush` notes how
/// many appends had returned when it ran.
private final class SlowSink: JournalSink, @unchecked Sendable {
    let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var appended = 0
    private var seenByFlush: [Int] = []
    private var held = false
    func append(_ entries: [JournalEntry], number: UInt64) {
        let first = lock.withLock { () -> Bool in
            defer { held = true }
            return !held
        }
        if first {
            entered.signal()
            _ = release.wait(timeout: .now() + 10)
        }
        lock.withLock { appended += 1 }
    }
    func flush() throws(OptimistError) { lock.withLock { seenByFlush.append(appended) } }
    func close() throws(OptimistError) {}
    func takeError() -> OptimistError? { nil }
    var flushesSaw: [Int] { lock.withLock { seenByFlush } }
}

extension ConcurrencyTests {
    /// A change readers already see may still be handing its journal to the sink (after its
    /// state-lock hold): a flush started then must wait for that hand-off, or it promises
    /// durability for a change the file has not been given.
    @Test func aFlushCoversAChangeStillHandingOverItsJournal() throws {
        let sink = SlowSink()
        let s = try Store(restoring: StoreSnapshot(clientID: "c"), sink: sink)
        let writer = Thread { _ = try? s.mutate([put("c", "k", ["n": 1])]) }
        writer.start()
        sink.entered.wait()  // the mutation is published; its journal is being appended
        #expect(try s.get("c", "k")?["n"]?.number == 1)
        let flushed = Locked(false)
        let flusher = Thread {
            try? s.flush()
            flushed.value = true
        }
        flusher.start()
        usleep(50_000)  // time for a flush that did not wait to reach the sink
        sink.release.signal()
        while !flushed.value || !writer.isFinished { usleep(1000) }
        // The flush reached the sink once the visible change's append had returned.
        #expect(sink.flushesSaw == [1])
        try s.close()
    }
}
