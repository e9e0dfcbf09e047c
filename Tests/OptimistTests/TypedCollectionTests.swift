import Foundation
import Testing
import Optimist

/// A typed collection does what the untyped calls do, with the app's own values.
@Suite struct TypedCollectionTests {
    let store = Store()
    var logs: TypedCollection<HabitLog> { store.collection("logs", of: HabitLog.self) }

    @Test func putThenGetGivesTheValueAndTheUntypedRecordAgrees() throws {
        let log = HabitLog.on("2026-11-22", "run", minutes: 30)
        let id = try logs.put(log, at: "2026-11-22/run")
        #expect(try logs.get("2026-11-22/run") == log)
        #expect(try logs.get("2026-11-22/swim") == nil)
        #expect(try store.get("logs", "2026-11-22/run") == RecordEncoder().encode(log))
        #expect(try logs.isPending("2026-11-22/run") && logs.status("2026-11-22/run") == .pending)
        #expect(try logs.confirmed("2026-11-22/run") == nil)
        try store.commit(id)
        #expect(try logs.status("2026-11-22/run") == .confirmed && logs.confirmed("2026-11-22/run") == log)
    }

    @Test func aRecordWrittenUntypedReadsTyped() throws {
        try store.mutate([.put(collection: "logs", key: "k", value: ["habit": "read", "day": "2026-11-22", "done": false,
                                                                    "minutes": 12, "at": "2026-11-22T07:30:00Z"])])
        let log = try #require(try logs.get("k"))
        #expect(log.habit == "read" && !log.done && log.minutes == 12 && log.note == nil)
        #expect(log.at == Date(timeIntervalSince1970: 1_795_332_600))
    }

    @Test func aFailedMutationKeptVisibleShowsAsFailed() throws {
        try logs.put(.on("d", "run", minutes: 1), at: "d/run", policy: .keep)
        _ = try store.outboxNext(now: 0)
        try store.fail(1, transient: false, reason: "no", now: 0)
        #expect(try logs.status("d/run") == .failed)
    }

    @Test func aRecordThatDoesNotDecodeNamesCollectionKeyAndField() throws {
        try store.mutate([.put(collection: "logs", key: "bad", value: ["habit": "run", "day": "d", "done": "yes", "minutes": 1, "at": "2026-11-22T07:30:00Z"])])
        let error = #expect(throws: CollectionError.self) { try logs.get("bad") }
        guard case .coding(let e)? = error else { Issue.record("expected a coding error, got \(String(describing: error))"); return }
        #expect(e.collection == "logs" && e.key == "bad" && e.path == [.field("done")])
        #expect(e.description == "logs/bad, field done: expected a bool, found a string")
        // A scan over it fails the same way rather than skipping it silently.
        #expect(throws: CollectionError.coding(e)) { try logs.scan() }
    }

    @Test func updateSendsOnlyTheChangedFields() throws {
        try logs.put(.on("d", "run", minutes: 10), at: "d/run")
        let id = try #require(try logs.update("d/run") { $0.minutes += 5; $0.note = "windy" })
        #expect(try store.mutation(id).ops == [.patch(collection: "logs", key: "d/run", value: ["minutes": 15, "note": "windy"])])
        #expect(try logs.get("d/run")?.minutes == 15)
        // Clearing an optional removes the member; changing nothing sends nothing.
        let clear = try #require(try logs.update("d/run") { $0.note = nil })
        #expect(try store.mutation(clear).ops == [.patch(collection: "logs", key: "d/run", value: ["note": nil])])
        let before = try store.pendingCount()
        #expect(try logs.update("d/run") { $0.minutes = 15 } == nil)
        #expect(try store.pendingCount() == before)
        #expect(throws: CollectionError.store(.notFound("no record logs/d/none to update"))) { try logs.update("d/none") { $0.done = true } }
    }

    @Test func updateLeavesAConcurrentChangeOfAnotherFieldAlone() throws {
        try store.commit(try logs.put(.on("d", "run", minutes: 10), at: "d/run"))
        // The server changes `note` meanwhile; the update of `done` does not put the old note back.
        try store.serverApply([.patch(collection: "logs", key: "d/run", value: ["note": "from the watch"])])
        try logs.update("d/run") { $0.done = false }
        let log = try #require(try logs.get("d/run"))
        #expect(log.note == "from the watch" && !log.done)
    }

    @Test func patchByKeyPathWritesThatFieldAlone() throws {
        try logs.put(.on("d", "run", minutes: 10), at: "d/run")
        let id = try logs.patch("d/run", \.done, to: false)
        #expect(try store.mutation(id).ops == [.patch(collection: "logs", key: "d/run", value: ["done": false])])
        let at = Date(timeIntervalSince1970: 0)
        try logs.patch("d/run", \.at, to: at)
        try logs.patch("d/run", \.note, to: "ok")
        let log = try #require(try logs.get("d/run"))
        #expect(!log.done && log.at == at && log.note == "ok" && log.minutes == 10)
        try logs.patch("d/run", \.note, to: nil)
        #expect(try store.get("logs", "d/run")?["note"] == nil)
    }

    @Test func fieldNamesFollowCodingKeysAndEveryFieldIsToldApart() throws {
        struct Renamed: Codable, Sendable {
            var a: Bool, b: Bool, c: Bool, minutes: Int, when: Date, id: UUID, mood: Mood, tags: [String], place: Place?
            enum CodingKeys: String, CodingKey { case a, b, c, minutes = "mins", when, id, mood, tags, place }
        }
        let coll = store.collection("r", of: Renamed.self)
        #expect(try coll.fieldName(\.a) == "a" && coll.fieldName(\.b) == "b" && coll.fieldName(\.c) == "c")
        #expect(try coll.fieldName(\.minutes) == "mins" && coll.fieldName(\.when) == "when" && coll.fieldName(\.id) == "id")
        #expect(try coll.fieldName(\.mood) == "mood" && coll.fieldName(\.tags) == "tags" && coll.fieldName(\.place) == "place")
        // A nested field is not a top-level one: refused, not guessed.
        let nested = #expect(throws: CollectionError.self) { try coll.fieldName(\.place?.lat) }
        guard case .store(.misuse)? = nested else { Issue.record("\(String(describing: nested))"); return }
    }

    @Test func deleteAndScanByPrefix() throws {
        for (day, habit, minutes) in [("2026-11-21", "run", 20), ("2026-11-22", "run", 30), ("2026-11-22", "read", 15), ("2026-11-23", "run", 25)] {
            try logs.put(.on(day, habit, minutes: minutes), at: Key("\(day)/\(habit)"))
        }
        try logs.delete("2026-11-22/run")
        let typed = try logs.scan(prefix: "2026-11-22/")
        let untyped = try store.scan("logs", prefix: "2026-11-22/")
        #expect(typed.map(\.key) == untyped.map(\.key))
        #expect(typed.map(\.value) == [HabitLog.on("2026-11-22", "read", minutes: 15)])
        #expect(try logs.scan(limit: 2).map(\.key) == ["2026-11-21/run", "2026-11-22/read"])
        #expect(try logs.scan().map(\.value.minutes) == (try store.scan("logs")).map { $0.value["minutes"]?.number.map(Int.init) })
    }

    @Test func putOpJoinsAnAtomicMutation() throws {
        let id = try store.mutate([try logs.putOp(.on("d", "run", minutes: 1), at: "d/run"),
                                   .incr(collection: "totals", key: "d", field: "minutes", delta: 1)])
        #expect(try store.mutation(id).ops.count == 2 && logs.get("d/run")?.minutes == 1)
    }

    @Test func aClosedStoreIsAStoreError() throws {
        try store.close()
        #expect(throws: CollectionError.store(.misuse("the store is closed"))) { try logs.get("x") }
    }
}
