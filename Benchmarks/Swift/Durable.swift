import Glibc
import Optimist

/// Durable throughput and reopen time on a file-backed store (skipped, with a note, while
/// `Store.open(path:)` cannot open files yet).
enum DurableBench {
    static let coll: Key = "logs"

    static func fresh(_ path: String) throws -> Store {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        return try Store.open(path: path)
    }

    static func op(_ i: Int, _ tag: String) -> [Op] {
        [.put(collection: coll, key: Key(tag + Workload.pad(i, 7)), value: Workload.record(day: "d000001", habit: "h001", seq: i))]
    }

    /// Returns false when file-backed stores are not available.
    static func run(dir: String, batchReps: Int, perOpReps: Int, reopenPending: Int, reopenReps: Int) throws -> Bool {
        let path = dir + "/durable.optimist"
        let store: Store
        do { store = try fresh(path) } catch {
            note("swift durable: skipped, file-backed stores unavailable (\(error))")
            emit([("section", .str("durable")), ("host", .str("swift")), ("kind", .str("skipped")), ("reason", .str("\(error)"))])
            return false
        }
        // 10k mutates, then one flush: the whole batch timed.
        var batch = [UInt64](), mutateOnly = [UInt64]()
        var seq = 0
        for rep in 0..<(batchReps + 1) {
            let t0 = nowNs()
            for _ in 0..<10_000 { try store.mutate(op(seq, "b")); seq += 1 }
            let t1 = nowNs()
            try store.flush()
            let t2 = nowNs()
            if rep > 0 { batch.append(t2 - t0); mutateOnly.append(t1 - t0) }
        }
        let sb = Summary(ns: batch)
        emit([("section", .str("durable")), ("host", .str("swift")), ("kind", .str("batch_10k_then_flush")),
              ("ops_per_s", .num(10_000 / (sb.median / 1e6))),
              ("mutate_phase_median_us", .num(Summary(ns: mutateOnly).median))] + sb.fields)
        // The same 10k-mutate bursts on an in-memory store: what the file-backed store adds.
        do {
            let mem = Store()
            var burst = [UInt64]()
            var mseq = 0
            for rep in 0..<(batchReps + 1) {
                let t = try timeNs { for _ in 0..<10_000 { try mem.mutate(op(mseq, "b")); mseq += 1 } }
                if rep > 0 { burst.append(t) }
            }
            let sm = Summary(ns: burst)
            emit([("section", .str("durable")), ("host", .str("swift")), ("kind", .str("burst_10k_memory")),
                  ("ops_per_s", .num(10_000 / (sm.median / 1e6)))] + sm.fields)
        }
        // mutate + flush per op.
        var perOp = [UInt64]()
        for rep in 0..<(perOpReps + perOpReps / 10) {
            let t = try timeNs { try store.mutate(op(seq, "p")); try store.flush() }
            seq += 1
            if rep >= perOpReps / 10 { perOp.append(t) }
        }
        let sp = Summary(ns: perOp)
        emit([("section", .str("durable")), ("host", .str("swift")), ("kind", .str("mutate_flush_per_op")),
              ("ops_per_s", .num(1e6 / sp.median))] + sp.fields)
        try store.close()

        // Reopen with `reopenPending` pending mutations.
        let rpath = dir + "/reopen.optimist"
        do {
            let s = try fresh(rpath)
            let t0 = nowNs()
            var chunkStart = 0
            while chunkStart < reopenPending {
                for i in chunkStart..<min(reopenPending, chunkStart + 10_000) { try s.mutate(op(i, "r")) }
                chunkStart += 10_000
            }
            try s.close()
            note("swift durable: wrote \(reopenPending) pending in \(Double(nowNs() - t0) / 1e6) ms")
        }
        var reopen = [UInt64]()
        for _ in 0..<reopenReps {
            var count = 0
            let t = try timeNs {
                let s = try Store.open(path: rpath)
                count = try s.pendingCount()
                try s.close()
            }
            precondition(count == reopenPending, "reopened with \(count) pending, expected \(reopenPending)")
            reopen.append(t)
        }
        emit([("section", .str("durable")), ("host", .str("swift")), ("kind", .str("reopen")),
              ("pending", .int(reopenPending))] + Summary(ns: reopen).fields)
        return true
    }
}
