import Observation
import Synchronization
import Testing
import Optimist

/// Typed live queries: built with key paths, rows decoded from the first moment, following
/// mutations, rollbacks and statuses, records that do not decode reported and left out,
/// Observation and the async sequence of rows.
@Suite struct TypedQueryTests {
    struct Log: Codable, Sendable, Equatable {
        var habit: String
        var day: Int
        var minutes: Int
    }

    final class Counter: Sendable {
        private let m = Mutex(0)
        func bump() { m.withLock { $0 += 1 } }
        var value: Int { m.withLock { $0 } }
    }

    func seeded() throws -> (Store, TypedCollection<Log>) {
        let store = Store()
        let logs = store.collection("logs", of: Log.self)
        try store.serverApply([
            .put(collection: "logs", key: "d1/run", value: ["habit": "run", "day": 1, "minutes": 20]),
            .put(collection: "logs", key: "d2/read", value: ["habit": "read", "day": 2, "minutes": 15]),
            .put(collection: "logs", key: "d3/run", value: ["habit": "run", "day": 3, "minutes": 30]),
        ])
        return (store, logs)
    }

    @Test func theSpecAKeyPathQueryBuilds() throws {
        let (_, logs) = try seeded()
        let spec = try logs.query().keys(prefix: "d").filter(\.habit, .eq, "run").sorted(by: \.day, descending: true).limit(5).spec()
        #expect(spec == (try QuerySpec(parsing: #"""
            {"collection": "logs", "range": {"prefix": "d"}, "where": {"field": "habit", "eq": "run"},
             "order": [{"field": "day", "desc": true}], "limit": 5}
            """#)))
        #expect(throws: CollectionError.self) { try logs.query().limit(0).spec() }
    }

    @Test func rowsExistFromCreationAndFollowTheVisibleState() throws {
        let (store, logs) = try seeded()
        let week = try logs.query().filter(\.habit, .eq, "run").sorted(by: \.day, descending: true).limit(2).live()
        #expect(week.rows.map(\.key) == ["d3/run", "d1/run"])
        #expect(week.rows.map(\.id) == week.rows.map(\.key))
        #expect(week.rows[0].value == Log(habit: "run", day: 3, minutes: 30) && week.rows[0].status == .confirmed)

        let id = try logs.put(Log(habit: "run", day: 9, minutes: 5), at: "d9/run")
        #expect(week.rows.map(\.key) == ["d9/run", "d3/run"])
        #expect(week.rows[0].status == .pending)
        try store.commit(id)
        #expect(week.rows[0].status == .confirmed)
        let later = try logs.put(Log(habit: "read", day: 9, minutes: 5), at: "d9/run")  // leaves the query
        #expect(week.rows.map(\.key) == ["d3/run", "d1/run"])
        try store.rollback(later)  // and comes back
        #expect(week.rows.map(\.key) == ["d9/run", "d3/run"])
    }

    @Test func aRecordThatDoesNotDecodeIsReportedAndLeftOut() throws {
        let (store, logs) = try seeded()
        let all = try logs.query().sorted(by: \.day).live()
        #expect(all.rows.count == 3 && all.failures.isEmpty)
        // "day" is a string here: the record does not decode as a Log.
        _ = try store.mutate([.put(collection: "logs", key: "d4/bad", value: ["habit": "run", "day": "four", "minutes": 1])])
        #expect(all.rows.map(\.key) == ["d1/run", "d2/read", "d3/run"])
        #expect(all.failures.map(\.key) == ["d4/bad"])
        if case .coding? = all.failures.first?.error {} else { Issue.record("expected a coding error, got \(all.failures)") }
        // Fixed, it decodes and takes its place; the query never ended.
        _ = try store.mutate([.put(collection: "logs", key: "d4/bad", value: ["habit": "run", "day": 4, "minutes": 1])])
        #expect(all.rows.map(\.key) == ["d1/run", "d2/read", "d3/run", "d4/bad"] && all.failures.isEmpty)
    }

    @Test func observationNotifiesOnEveryChangeOfTheRows() throws {
        let (_, logs) = try seeded()
        let runs = try logs.query().filter(\.habit, .eq, "run").live()
        let notified = Counter()
        withObservationTracking({ _ = runs.rows }, onChange: { notified.bump() })
        try logs.put(Log(habit: "run", day: 5, minutes: 10), at: "d5/run")
        #expect(notified.value == 1)
        // A record outside the query changes nothing.
        let quiet = Counter()
        withObservationTracking({ _ = runs.rows }, onChange: { quiet.bump() })
        try logs.put(Log(habit: "read", day: 6, minutes: 10), at: "d6/read")
        #expect(quiet.value == 0)
    }

    @Test func updatesYieldTheRowsNowThenAfterEachChange() async throws {
        let (_, logs) = try seeded()
        let runs = try logs.query().filter(\.habit, .eq, "run").sorted(by: \.day).live()
        var updates = runs.updates().makeAsyncIterator()
        #expect(await updates.next()?.map(\.key) == ["d1/run", "d3/run"])
        try logs.put(Log(habit: "run", day: 2, minutes: 10), at: "d2/run")
        #expect(await updates.next()?.map(\.key) == ["d1/run", "d2/run", "d3/run"])
        runs.close()
        #expect(await updates.next() == nil)
    }

    @Test func statusQueriesListFailedRecords() throws {
        let (store, logs) = try seeded()
        let failed = try logs.query().status(.failed).live()
        let id = try logs.put(Log(habit: "swim", day: 7, minutes: 40), at: "d7/swim", policy: .keep)
        #expect(failed.rows.isEmpty)
        try store.fail(id, transient: false, reason: "refused", now: 0)
        #expect(failed.rows.map(\.key) == ["d7/swim"] && failed.rows[0].status == .failed)
        try store.retry(id)
        #expect(failed.rows.isEmpty)
    }
}
