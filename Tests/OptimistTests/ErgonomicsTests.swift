import Foundation
import Testing
import Optimist
import OptimistFoundation

/// The Swift items an app developer met first: keys by interpolation, a counter by key path,
/// a retry by record, a scan that keeps going past a bad record, `Duration` and `Date`
/// overloads, and errors that describe themselves to `localizedDescription`.
@Suite struct ErgonomicsTests {
    struct Habit: Codable, Sendable, Equatable {
        var name: String
        var count: Int
    }

    @Test func keysTakeInterpolation() throws {
        let n = 7
        let key: Key = "day-\(n)"
        #expect(key == Key("day-7"))
        let store = Store()
        try store.mutate([.put(collection: "c", key: "k\(n + 1)", value: [:])])
        #expect(try store.get("c", "k8") == [:])
    }

    @Test func incrByKeyPathAndRetryByRecord() throws {
        let store = Store()
        let habits = store.collection("habits", of: Habit.self)
        try habits.put(Habit(name: "run", count: 1), at: "run")
        let inc = try habits.incr("run", \.count, by: 2)
        #expect(try habits.get("run") == Habit(name: "run", count: 3))
        #expect(try store.mutation(inc).ops == [.incr(collection: "habits", key: "run", field: "count", delta: 2)])
        #expect(throws: CollectionError.self) { try habits.incr("run", \.count, by: .infinity) }

        // A kept failure on the record, then the record's Retry button.
        let kept = try habits.put(Habit(name: "run", count: 10), at: "run", policy: .keep)
        while let m = try store.outboxNext(now: 0) {
            if m.id == kept { try store.fail(m.id, transient: false, reason: "refused", now: 0) } else { try store.commit(m.id) }
        }
        #expect(try habits.status("run") == .failed)
        #expect(try habits.retry("run") == [kept])
        #expect(try store.status(kept) == .pending)
        #expect(try habits.retry("nothing-here").isEmpty)
    }

    @Test func scanDecodableListsTheRecordsThatDoNotDecode() throws {
        let store = Store()
        let habits = store.collection("habits", of: Habit.self)
        try habits.put(Habit(name: "run", count: 1), at: "a")
        try store.mutate([.put(collection: "habits", key: "b", value: ["name": "swim", "count": "many"])])
        try habits.put(Habit(name: "read", count: 2), at: "c")
        #expect(throws: CollectionError.self) { try habits.scan() }
        let (rows, failures) = try habits.scanDecodable()
        #expect(rows.map(\.key) == ["a", "c"])
        #expect(failures.map(\.key) == ["b"])
        #expect(failures[0].error.description.contains("count"))
    }

    @Test func durationAndDateOverloads() throws {
        let store = Store()
        let id = try store.mutate([.put(collection: "c", key: "k", value: [:])])
        #expect(try store.waitSettled(id, timeout: .milliseconds(10)) == nil)
        #expect(try store.outboxWait(timeout: .zero) == true)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try store.outboxNext(at: now)?.id == id)
        try store.fail(id, transient: true, reason: "offline", at: now)
        let m = try store.mutation(id)
        #expect(m.nextAttemptAt > 1_800_000_000_000 && m.lastError == "offline")
        try store.markLoaded("c", from: "a", to: "z", at: now)
        #expect(try store.needsReload("c", "k", at: now.addingTimeInterval(30), maxAge: .seconds(60)) == false)
        #expect(try store.needsReload("c", "k", at: now.addingTimeInterval(120), maxAge: .seconds(60)) == true)
    }

    @Test func errorsDescribeThemselvesToLocalizedDescription() throws {
        let store = Store()
        do { try store.commit(42); Issue.record("committed an unknown id") } catch {
            #expect((error as any Error).localizedDescription == "no mutation 42")
        }
        let habits = store.collection("habits", of: Habit.self)
        try store.mutate([.put(collection: "habits", key: "b", value: ["name": 1])])
        do { _ = try habits.get("b"); Issue.record("decoded a bad record") } catch {
            #expect((error as any Error).localizedDescription.contains("habits"))
        }
    }
}

/// Decode failures per record in a typed stream, and a listener on the main actor.
@Suite struct StreamErgonomicsTests {
    struct Habit: Codable, Sendable, Equatable {
        var name: String
        var count: Int
    }

    @Test func aStreamThatReportsGoesOnPastABadRecord() async throws {
        let store = Store()
        let habits = store.collection("habits", of: Habit.self)
        let stream = try habits.changes(undecodable: .report)
        try store.mutate([.put(collection: "habits", key: "bad", value: ["name": 3])])
        try habits.put(Habit(name: "run", count: 1), at: "good")
        var seen: [TypedChange<Habit>] = []
        for try await change in stream {
            seen.append(change)
            if seen.count == 2 { break }
        }
        #expect(seen[0].key == "bad" && seen[0].value == nil && seen[0].failure != nil)
        #expect(seen[1].key == "good" && seen[1].value == Habit(name: "run", count: 1) && seen[1].failure == nil)

        // The default still ends at the bad record.
        let strict = try habits.changes()
        try store.mutate([.put(collection: "habits", key: "bad2", value: ["count": "x"])])
        await #expect(throws: CollectionError.self) { for try await _ in strict {} }
    }

    @MainActor final class Heard {
        var keys: [Key] = []
    }

    @Test @MainActor func aMainActorListenerHearsEveryBatchInOrder() async throws {
        let store = Store()
        let heard = Heard()
        let sub = try store.subscribeOnMainActor(collection: "logs") { changes in
            MainActor.assertIsolated()
            heard.keys += changes.map(\.key)
        }
        // Made on another thread.
        try await Task.detached {
            for i in 0..<20 { try store.mutate([.put(collection: "logs", key: "k\(i)", value: [:])]) }
        }.value
        for _ in 0..<500 where heard.keys.count < 20 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(heard.keys == (0..<20).map { Key("k\($0)") })
        sub.cancel()
    }
}
