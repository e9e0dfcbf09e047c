import Testing
import OptimistCore
import OptimistModel
import OptimistOpen

/// Many threads mutating and flushing one file-backed store: every accepted mutation is
/// written, in an order the store accepted, and comes back on reopen.
@Suite struct FileConcurrencyTests {
    @Test func manyWritersThenReopen() async throws {
        let dir = TempDir()
        let path = dir.file("threads.db")
        let s = try Store.open(path: path)
        let writers = 4, each = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    for i in 0..<each {
                        try s.mutate([.incr(collection: "c", key: "total", field: "n", delta: 1),
                                      .put(collection: Key("w\(w)"), key: Key("k\(i)"), value: ["i": .number(Double(i))])])
                        if i % 7 == 0 { _ = try s.outboxNext(now: 0) }
                        if i % 50 == 0 { try s.flush() }
                    }
                }
            }
            try await group.waitForAll()
        }
        let visible = try s.get("c", "total")
        try s.close()

        try withStore(path) { r throws in
            #expect(try r.get("c", "total") == visible)
            #expect(visible == ["n": .number(Double(writers * each))])
            #expect(try r.pendingCount() == writers * each)
            for w in 0..<writers { #expect(try r.scan(Key("w\(w)")).count == each) }
            // Every id from 1 up is there, all pending again (inflight ones come back pending).
            for id in 1...MutationID(writers * each) { #expect(try r.status(id) == .pending) }
        }
    }
}
