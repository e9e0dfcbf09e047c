import Optimist

/// Issue #2's microbenchmark: apply (mutate), commit and rollback on an in-memory store of
/// `records` ~100-byte records, with `pending` unrelated mutations (on other keys) left pending.
/// Each op is timed alone; the op arrays are built beforehand, so only the store call is timed.
enum CoreBench {
    static let coll: Key = "items"

    static func recordKey(_ i: Int) -> Key { Key("r" + Workload.pad(i, 7)) }

    /// A fresh in-memory store with `records` confirmed records and `pending` pending mutations.
    static func makeStore(records: Int, pending: Int) throws -> Store {
        let store = Store()
        var chunk = [Op]()
        for i in 0..<records {
            chunk.append(.put(collection: coll, key: recordKey(i), value: Workload.record(day: Workload.day(i / 8), habit: "h" + Workload.pad(i % 8, 3), seq: i)))
            if chunk.count == 10_000 { try store.serverApply(chunk); chunk.removeAll(keepingCapacity: true) }
        }
        if !chunk.isEmpty { try store.serverApply(chunk) }
        for j in 0..<pending {
            try store.mutate([.put(collection: coll, key: Key("q" + Workload.pad(j, 6)), value: Workload.record(day: "d999999", habit: "q", seq: j))])
        }
        return store
    }

    /// Ready-made single-put mutations on random existing records.
    static func opPool(records: Int, count: Int = 1024) -> [[Op]] {
        var rng = Rand(seed: 42)
        return (0..<count).map { s in
            [.put(collection: coll, key: recordKey(rng.below(records)), value: Workload.record(day: "d000001", habit: "h001", seq: s))]
        }
    }

    static func run(records: Int, pending: Int, samples: Int, warmup: Int) throws {
        let t0 = nowNs()
        let store = try makeStore(records: records, pending: pending)
        note("swift core: built \(records) records + \(pending) pending in \(Double(nowNs() - t0) / 1e6) ms")
        let pool = opPool(records: records)
        var apply = [UInt64](), commit = [UInt64](), rollback = [UInt64]()
        apply.reserveCapacity(samples); commit.reserveCapacity(samples); rollback.reserveCapacity(samples)
        for s in 0..<(warmup + samples) {
            let ops = pool[s % pool.count]
            // apply, then commit it untimed so the pending count stays put
            var id: MutationID = 0
            let ta = try timeNs { id = try store.mutate(ops) }
            try store.commit(id)
            // commit timed
            let id2 = try store.mutate(ops)
            let tc = try timeNs { try store.commit(id2) }
            // rollback timed
            let id3 = try store.mutate(ops)
            let tr = try timeNs { try store.rollback(id3) }
            if s >= warmup { apply.append(ta); commit.append(tc); rollback.append(tr) }
        }
        let left = try store.pendingCount()
        precondition(left == pending, "pending count drifted")
        for (name, samples) in [("apply", apply), ("commit", commit), ("rollback", rollback)] {
            emit([("section", .str("core")), ("host", .str("swift")), ("op", .str(name)),
                  ("records", .int(records)), ("pending", .int(pending))] + Summary(ns: samples).fields)
        }
        try store.close()
    }
}
