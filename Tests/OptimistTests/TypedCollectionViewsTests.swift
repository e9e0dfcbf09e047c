import Foundation
import Testing
import Optimist

/// Views defined by key path hold what the same untyped views hold.
@Suite struct TypedCollectionViewsTests {
    @Test func countAndSumMatchTheUntypedViewsThroughMutationsAndRollbacks() throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let count = try logs.countView("typed-count", prefix: "2026-11-22/")
        let sum = try logs.sumView("typed-minutes", of: \.minutes, prefix: "2026-11-22/")
        try store.defineView("untyped-count", collection: "logs", prefix: "2026-11-22/", kind: .count)
        try store.defineView("untyped-minutes", collection: "logs", prefix: "2026-11-22/", kind: .sum(field: "minutes"))
        func agree() throws {
            #expect(try count.value() == store.viewValue("untyped-count"))
            #expect(try sum.value() == store.viewValue("untyped-minutes"))
        }
        var ids = [MutationID]()
        for (i, habit) in ["run", "read", "swim", "yoga"].enumerated() {
            ids.append(try logs.put(.on("2026-11-22", habit, minutes: 10 * (i + 1)), at: Key("2026-11-22/\(habit)")))
            try logs.put(.on("2026-11-23", habit, minutes: 1), at: Key("2026-11-23/\(habit)"))
            try agree()
        }
        #expect(try count.value() == 4 && sum.value() == 100)
        try logs.update("2026-11-22/run") { $0.minutes = 45 }
        try store.rollback(ids[1])
        try logs.delete("2026-11-22/swim")
        try agree()
        #expect(try count.value() == 2 && sum.value() == 45 + 40)
    }

    @Test func sumOfAnOptionalFieldAndByFieldName() throws {
        struct Run: Codable, Sendable { var km: Double?; var label: String }
        let store = Store()
        let runs = store.collection("runs", of: Run.self)
        let byPath = try runs.sumView("km", of: \.km)
        let byName = try runs.sumView("km-by-name", field: "km")
        try runs.put(Run(km: 5.5, label: "a"), at: "a")
        try runs.put(Run(km: nil, label: "b"), at: "b")
        try runs.put(Run(km: 2, label: "c"), at: "c")
        #expect(try byPath.value() == 7.5 && byName.value() == 7.5)
    }

    @Test func aLiveViewFollows() throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let live = try logs.sumView("minutes", of: \.minutes).live()
        try logs.put(.on("d", "run", minutes: 12), at: "d/run")
        #expect(live.value == 12)
    }
}
