import Optimist

/// Rollback cost with 0 and 10k unrelated pending mutations, Optimist against the two naive
/// baselines in Baselines.swift, on the same table of `records` records. Reports the cost of
/// the mutation too, since snapshot-restore pays its price there.
enum RollbackBench {
    static func run(records: Int, pendingCounts: [Int], samples: Int, warmup: Int) throws {
        var table = Table(minimumCapacity: records)
        for i in 0..<records {
            table[CoreBench.recordKey(i)] = Workload.record(day: Workload.day(i / 8), habit: "h001", seq: i)
        }
        let pool = CoreBench.opPool(records: records)
        func put(_ s: Int) -> (Key, Record) {
            guard case .put(_, let k, let v) = pool[s % pool.count][0] else { fatalError() }
            return (k, v)
        }
        func report(_ impl: String, _ pending: Int, _ m: [UInt64], _ r: [UInt64], correct: Bool) {
            for (op, xs) in [("mutate", m), ("rollback", r)] {
                emit([("section", .str("rollback")), ("host", .str("swift")), ("impl", .str(impl)), ("op", .str(op)),
                      ("records", .int(records)), ("pending", .int(pending)), ("correct_with_concurrent", .bool(correct))]
                     + Summary(ns: xs).fields)
            }
        }
        /// Times a put and its rollback on a baseline, `samples` times after `warmup`.
        func sample<B: NaiveRollback>(_ b: inout B) -> (mutate: [UInt64], rollback: [UInt64]) {
            var m = [UInt64](), r = [UInt64]()
            for s in 0..<(warmup + samples) {
                let (k, v) = put(s)
                var id: UInt64 = 0
                let tm = timeNs { id = b.put(k, v) }
                let tr = timeNs { b.rollback(id) }
                if s >= warmup { m.append(tm); r.append(tr) }
            }
            return (m, r)
        }
        let (optOK, snapOK, replayOK) = correctness(table)
        for pending in pendingCounts {
            let extra = (0..<pending).map { j in (Key("q" + Workload.pad(j, 6)), Workload.record(day: "d999999", habit: "q", seq: j)) }
            // Optimist
            do {
                let store = try CoreBench.makeStore(records: records, pending: pending)
                var m = [UInt64](), r = [UInt64]()
                // Optimist's calls take about a microsecond: many more samples than the baselines.
                for s in 0..<(500 + samples * 50) {
                    var id: MutationID = 0
                    let tm = try timeNs { id = try store.mutate(pool[s % pool.count]) }
                    let tr = try timeNs { try store.rollback(id) }
                    if s >= 500 { m.append(tm); r.append(tr) }
                }
                report("optimist", pending, m, r, correct: optOK)
                try store.close()
            }
            // Snapshot-restore
            do {
                var b = SnapshotRestore(table)
                // Their snapshots are not kept (10k full copies do not fit), and writing them directly
                // skips 10k O(n) copies that would only slow the set-up.
                for (k, v) in extra { b.state[k] = v }
                let (m, r) = sample(&b)
                report("snapshot_restore", pending, m, r, correct: snapOK)
            }
            // Revert everything and replay
            do {
                var b = RevertReplay(table)
                for (k, v) in extra { _ = b.put(k, v) }
                let (m, r) = sample(&b)
                report("revert_replay", pending, m, r, correct: replayOK)
            }
        }
    }

    /// Two overlapping mutations on different keys; roll back the first. The second must stay
    /// visible. Returns whether each implementation gets that right.
    static func correctness(_ table: Table) -> (Bool, Bool, Bool) {
        let a: Key = "r0000000", b: Key = "r0000001"
        let va: Record = ["v": 1], vb: Record = ["v": 2]
        var snap = SnapshotRestore(table)
        let s1 = snap.put(a, va); _ = snap.put(b, vb); snap.rollback(s1)
        var replay = RevertReplay(table)
        let r1 = replay.put(a, va); _ = replay.put(b, vb); replay.rollback(r1)
        let store = Store()
        var optOK = false
        do {
            try store.serverApply([.put(collection: CoreBench.coll, key: a, value: table[a]!), .put(collection: CoreBench.coll, key: b, value: table[b]!)])
            let o1 = try store.mutate([.put(collection: CoreBench.coll, key: a, value: va)])
            try store.mutate([.put(collection: CoreBench.coll, key: b, value: vb)])
            try store.rollback(o1)
            optOK = try store.get(CoreBench.coll, b) == vb && store.get(CoreBench.coll, a) == table[a]
        } catch { optOK = false }
        return (optOK, snap.state[b] == vb && snap.state[a] == table[a], replay.state[b] == vb && replay.state[a] == table[a])
    }
}
