import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct ViewAndFreshnessTests {
    let s = Store()

    @Test func viewsFollowEveryKindOfChange() throws {
        try s.serverApply([put("logs", "2026-11-21/run", ["done": 1]), put("logs", "2026-11-22/run", ["done": 1])])
        try s.defineView("today", collection: "logs", prefix: "2026-11-22", kind: .count)
        try s.defineView("done", collection: "logs", kind: ViewKind(parsing: "sum:done"))
        #expect(try s.viewValue("today") == 1)
        #expect(try s.viewValue("done") == 2)
        let a = try s.mutate([put("logs", "2026-11-22/read", ["done": 1])])
        let b = try s.mutate([incr("logs", "2026-11-21/run", "done", 2)])
        #expect(try s.viewValue("today") == 2)
        #expect(try s.viewValue("done") == 5)
        try s.rollback(a)
        #expect(try s.viewValue("today") == 1)
        try s.serverApply([delete("logs", "2026-11-21/run")])
        #expect(try s.viewValue("done") == 3)
        try s.commit(b)
        #expect(try s.viewValue("done") == 3)
        #expect(throws: OptimistError.notFound("no view nope")) { try s.viewValue("nope") }
        #expect(throws: OptimistError.self) { try ViewKind(parsing: "avg:x") }
    }

    @Test func freshnessRanges() throws {
        #expect(try s.needsReload("logs", "2026-11-22", now: 0, maxAge: 1000))
        try s.markLoaded("logs", from: "2026-11-01", to: "2026-11-30", at: 10_000)
        #expect(try !s.needsReload("logs", "2026-11-22", now: 10_500, maxAge: 1000))
        #expect(try !s.needsReload("logs", "2026-11-30", now: 11_000, maxAge: 1000))
        #expect(try s.needsReload("logs", "2026-11-22", now: 11_001, maxAge: 1000))
        #expect(try s.needsReload("logs", "2026-12-01", now: 10_500, maxAge: 1000))
        #expect(try s.needsReload("other", "2026-11-22", now: 10_500, maxAge: 1000))
        try s.markLoaded("logs", from: "2026-11-22", to: "2026-11-22", at: 20_000)
        #expect(try !s.needsReload("logs", "2026-11-22", now: 20_500, maxAge: 1000))
        #expect(try s.needsReload("logs", "2026-11-21", now: 20_500, maxAge: 1000))
        #expect(throws: OptimistError.self) { try s.markLoaded("logs", from: "b", to: "a", at: 0) }
    }
}
