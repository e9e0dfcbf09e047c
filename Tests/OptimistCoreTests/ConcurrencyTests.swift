import Testing
@testable import OptimistCore

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
