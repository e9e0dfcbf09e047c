import Observation
import Synchronization
import Testing
import Optimist

/// Typed grouped live queries: built with key paths, groups present from creation, following
/// taps, rollbacks and the server, min/max right when the extreme leaves, decoded by-values and
/// aggregates, Observation, the async sequence, and indexes used by their `where`.
@Suite struct TypedGroupQueryTests {
    struct Log: Codable, Sendable, Equatable {
        var habit: String
        var day: String
        var minutes: Int
    }

    func seeded() throws -> (Store, TypedCollection<Log>) {
        let store = Store()
        let logs = store.collection("logs", of: Log.self)
        try store.serverApply([
            .put(collection: "logs", key: "26/run/1", value: ["habit": "run", "day": "26", "minutes": 20]),
            .put(collection: "logs", key: "26/read/1", value: ["habit": "read", "day": "26", "minutes": 15]),
            .put(collection: "logs", key: "26/run/2", value: ["habit": "run", "day": "26", "minutes": 30]),
            .put(collection: "logs", key: "25/run/1", value: ["habit": "run", "day": "25", "minutes": 99]),
        ])
        return (store, logs)
    }

    @Test func theSpecAGroupedBuilderMakes() throws {
        let (_, logs) = try seeded()
        let spec = try logs.query().keys(prefix: "26/").filter(\.minutes, .gt, 0)
            .grouped(by: \.habit).count(as: "n").sum(\.minutes, as: "total").average(\.minutes, as: "avg")
            .min(\.day, as: "first").max(\.minutes, as: "longest").limit(3).spec()
        #expect(spec == (try QuerySpec(parsing: #"""
            {"collection": "logs", "range": {"prefix": "26/"}, "where": {"field": "minutes", "gt": 0},
             "group": {"by": ["habit"], "aggregates": {"n": "count", "total": "sum:minutes", "avg": "avg:minutes",
                                                       "first": "min:day", "longest": "max:minutes"}}, "limit": 3}
            """#)))
        // A sorted query cannot be grouped (groups have their own order), nor a limit below 1.
        #expect(throws: CollectionError.self) { try logs.query().sorted(by: \.day).grouped(by: \.habit).spec() }
        #expect(throws: CollectionError.self) { try logs.query().grouped(by: \.habit).limit(0).spec() }
        #expect(throws: CollectionError.self) { try logs.query().grouped(by: \.habit).count(as: "x").sum(\.minutes, as: "x").spec() }
    }

    @Test func groupsExistFromCreationAndFollowEveryChange() throws {
        let (store, logs) = try seeded()
        let today = try logs.query().keys(prefix: "26/").grouped(by: \.habit)
            .count(as: "n").sum(\.minutes, as: "minutes").max(\.minutes, as: "longest").live()
        func table() throws -> [String: [Double]] {
            var out = [String: [Double]]()
            for r in today.rows {
                out[try #require(try r.key("habit", as: String.self))] = [r.number("n") ?? -1, r.number("minutes") ?? -1, r.number("longest") ?? -1]
            }
            return out
        }
        #expect(today.rows.map(\.id) == [["read"], ["run"]])
        #expect(try table() == ["read": [1, 15, 15], "run": [2, 50, 30]])

        let tap = try logs.put(Log(habit: "swim", day: "26", minutes: 10), at: "26/swim/1")
        #expect(try table() == ["read": [1, 15, 15], "run": [2, 50, 30], "swim": [1, 10, 10]])
        try store.rollback(tap)
        #expect(try table() == ["read": [1, 15, 15], "run": [2, 50, 30]])
        // The extreme leaves its group: the max falls back to the next value.
        try store.serverApply([.delete(collection: "logs", key: "26/run/2")])
        #expect(try table() == ["read": [1, 15, 15], "run": [1, 20, 20]])
        #expect(try today.rows[1].value("longest", as: Int.self) == 20)
        #expect(throws: CollectionError.self) { try today.rows[1].value("nope", as: Int.self) }
        #expect(throws: CollectionError.self) { try today.rows[1].key("habit", as: Int.self) }
    }

    @Test func observationAndTheAsyncSequenceSeeEachChange() async throws {
        let (_, logs) = try seeded()
        let today = try logs.query().keys(prefix: "26/").grouped(by: \.habit).sum(\.minutes, as: "minutes").live()
        let changed = Mutex(false)
        withObservationTracking { _ = today.rows } onChange: { changed.withLock { $0 = true } }
        var updates = today.updates().makeAsyncIterator()
        #expect(await updates.next()?.count == 2)
        _ = try logs.put(Log(habit: "read", day: "26", minutes: 5), at: "26/read/2")
        #expect(changed.withLock { $0 })
        let next = await updates.next()
        #expect(next?.first { $0.id == ["read"] }?.number("minutes") == 20)
        today.close()
        #expect(await updates.next() == nil)
    }

    @Test func aGroupedQueryReadsThroughAnIndexItsWhereFits() throws {
        let (_, logs) = try seeded()
        try logs.defineIndex(\.day)
        #expect(try logs.store.indexedFields(collection: "logs") == [FieldPath("day")])
        let byDay = try logs.query().filter(\.day, .eq, "25").grouped(by: \.habit).sum(\.minutes, as: "m").live()
        #expect(byDay.rows.map { $0.number("m") } == [99])
    }
}
