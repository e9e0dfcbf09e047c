#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Optimist

/// Issue #19's benchmark: a put and a get of a habit log through a typed collection (Codable
/// in and out) beside the same calls with the record spelled as JSON, on an in-memory store of
/// `records` logs. Each call is timed alone; puts are committed untimed so the pending count
/// stays put.
enum TypedBench {
    struct HabitLog: Codable, Sendable {
        var habit: String
        var day: String
        var done: Bool
        var minutes: Int
        var note: String?
        var at: Date
    }

    static func log(_ i: Int) -> HabitLog {
        HabitLog(habit: "h" + Workload.pad(i % 8, 3), day: Workload.day(i / 8), done: i % 3 != 0, minutes: 10 + i % 50,
                 note: i % 4 == 0 ? "windy" : nil, at: Date(timeIntervalSinceReferenceDate: 817_000_000 + Double(i)))
    }

    static func key(_ i: Int) -> Key { Key("r" + Workload.pad(i, 7)) }

    static func run(records: Int, samples: Int, warmup: Int) throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let encoder = RecordEncoder()
        // The untyped side gets the same records, already as JSON: what an app spelling its
        // records by hand hands to mutate.
        let asRecords = try (0..<1024).map { try encoder.encode(log($0)) }
        let values = (0..<1024).map(log)
        for i in 0..<records { try store.serverApply([.put(collection: "logs", key: key(i), value: asRecords[i % 1024])]) }

        var rng = Rand(seed: 19)
        var typedPut = [UInt64](), untypedPut = [UInt64](), typedGet = [UInt64](), untypedGet = [UInt64]()
        var sink = 0
        for s in 0..<(warmup + samples) {
            let k = key(rng.below(records)), v = s % 1024
            var id: MutationID = 0
            let tu = try timeNs { id = try store.mutate([.put(collection: "logs", key: k, value: asRecords[v])]) }
            try store.commit(id)
            let tt = try timeNs { id = try logs.put(values[v], at: k) }
            try store.commit(id)
            let gu = try timeNs { sink &+= try store.get("logs", k)?.count ?? 0 }
            let gt = try timeNs { sink &+= try logs.get(k)?.minutes ?? 0 }
            if s >= warmup { untypedPut.append(tu); typedPut.append(tt); untypedGet.append(gu); typedGet.append(gt) }
        }
        let left = try store.pendingCount()
        precondition(sink != 0 && left == 0, "pending count drifted")
        for (op, api, samples) in [("put", "untyped", untypedPut), ("put", "typed", typedPut),
                                   ("get", "untyped", untypedGet), ("get", "typed", typedGet)] {
            emit([("section", .str("typed")), ("host", .str("swift")), ("op", .str(op)), ("api", .str(api)),
                  ("records", .int(records))] + Summary(ns: samples).fields)
        }
        try store.close()
    }
}
