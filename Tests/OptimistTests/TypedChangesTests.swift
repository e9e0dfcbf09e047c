import Foundation
import Testing
import Optimist

/// The typed change sequence: decoded values, every change, in each writer's order.
@Suite struct TypedChangesTests {
    @Test func decodedChangesWithStatusAndCause() async throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let changes = try logs.changes(prefix: "2026-11-22/")
        let log = HabitLog.on("2026-11-22", "run", minutes: 30)
        let id = try logs.put(log, at: "2026-11-22/run")
        try logs.put(log, at: "2026-11-23/run")   // outside the prefix
        try store.commit(id)
        try logs.delete("2026-11-22/run")
        var seen = [TypedChange<HabitLog>]()
        for try await c in changes {
            seen.append(c)
            if seen.count == 3 { break }
        }
        #expect(seen == [
            TypedChange(key: "2026-11-22/run", value: log, status: .pending, cause: .mutate),
            TypedChange(key: "2026-11-22/run", value: log, status: .confirmed, cause: .commit),
            TypedChange(key: "2026-11-22/run", value: nil, status: .pending, cause: .mutate),
        ])
    }

    @Test func severalWritersOneConsumerSeesEveryChangeInEachWritersOrder() async throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let writers = 8, perWriter = 200
        let changes = try logs.changes()
        let consumer = Task { () throws(CollectionError) -> [Key: [Int]] in
            var minutesByKey = [Key: [Int]]()
            var n = 0
            for try await c in changes {
                minutesByKey[c.key, default: []].append(c.value?.minutes ?? -1)
                n += 1
                if n == writers * perWriter * 2 { break }
            }
            return minutesByKey
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<writers {
                group.addTask {
                    for i in 0..<perWriter {
                        let key = Key("w\(w)/\(i)")
                        try logs.put(.on("d", "h\(w)", minutes: 1), at: key)
                        try logs.update(key) { $0.minutes = 2 }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = try await consumer.value
        #expect(seen.count == writers * perWriter)
        // Each key: its put, then its update, nothing lost or doubled.
        #expect(seen.values.allSatisfy { $0 == [1, 2] })
    }

    @Test func aRecordThatDoesNotDecodeEndsTheSequenceWithItsName() async throws {
        let store = Store()
        let changes = try store.collection("logs", of: HabitLog.self).changes()
        try store.mutate([.put(collection: "logs", key: "bad", value: ["habit": 1])])
        var iterator = changes.makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("a bad record decoded")
        } catch {
            guard case .coding(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.collection == "logs" && e.key == "bad" && e.path == [.field("habit")])
        }
    }
}
