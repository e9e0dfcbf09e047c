import Glibc
import Optimist
import OptimistSQLite
import OptimistModel

/// `optimist-bench --probe NAME [DIR]`: one operation in a loop, for profilers
/// (`perf record`, `valgrind --tool=callgrind --toggle-collect='*Probe*loop*'`), with the
/// phases of a reopen timed apart. Prints a line of medians on stderr; nothing on stdout.
///
/// - `reopen`: a store file with 100k pending mutations; open, pendingCount and close timed
///   apart (5 times), after 5 opens with their two phases timed apart: opening the file
///   (`SQLiteStoreFile.open`: meta, views, ended ids) and restoring the store from it
///   (`Store(restoring:)`, which reads the mutations while another thread folds them).
/// - `get-miss`: random gets on a 1M-record store file (built once in DIR);
/// - `get-cycle`: the readers bench's reader alone, in memory: 100k records read round after
///   round (more than the default cache holds, so nearly every get reads under the state lock);
/// - `tap-1m`: the storage bench's tap on that file;
/// - `mutate-new`, `commit`, `apply`: 20k calls on a file-backed store of 1k records.
/// - `durable`: the durable bench's batch (10k mutates, then one flush) 30 times on a fresh
///   store file, with the mutates and the flush timed apart.
/// - `batch`, `batch-whole`, `batch-file`, `batch-file-whole`: six 100k-record server
///   batches, staged or whole, in memory or on a file, then gets; `batch-read` reads every
///   record before each batch, so that each publish has a full read cache to put back
///   (`--toggle-collect='*ReadCache*refill*'` counts that alone).
/// - `typed-get`, `typed-put`, `hand-get`, `hand-put`: the typed bench's calls (a `HabitLog`
///   through a typed collection, or its record built and read by hand) on 1k records in memory.
/// - `writers`, `writers-file`: the readers bench's writers step alone (mutate + commit pairs
///   on one thread, on two, and on one beside a spinning thread, in rounds), five times on an
///   in-memory store or on a store file in DIR.
enum Probe {
    static let coll: Key = "logs"

    static func run(_ name: String, dir: String) throws {
        switch name {
        case "reopen": try reopen(dir: dir)
        case "get-miss": try getMiss(dir: dir)
        case "get-cycle": try getCycle()
        case "mutate-new", "commit", "apply": try taps(name, dir: dir)
        case "tap-1m": try tap1M(dir: dir)
        case "durable": try durable(dir: dir)
        case "batch", "batch-whole", "batch-file", "batch-file-whole", "batch-read": try batches(name, dir: dir)
        case "typed-get", "typed-put", "hand-get", "hand-put": try typed(name)
        case "writers": for rep in 0..<5 { try ReadersBench.writerThroughput(Store(), kind: "memory", rep: rep) }
        case "writers-file":
            for rep in 0..<5 {
                let s = try DurableBench.fresh(dir + "/probe-writers.optimist")
                try ReadersBench.writerThroughput(s, kind: "file", rep: rep)
                try s.close()
            }
        default: note("unknown probe \(name)"); exit(2)
        }
    }

    static func reopen(dir: String) throws {
        let path = dir + "/probe-reopen.optimist"
        if access(path, F_OK) != 0 {
            let s = try Store.open(path: path)
            for i in 0..<100_000 { try s.mutate(DurableBench.op(i, "r")) }
            try s.close()
        }
        var opens = [UInt64](), counts = [UInt64](), closes = [UInt64]()
        var loads = [UInt64](), restores = [UInt64]()
        for _ in 0..<5 {
            let t0 = nowNs()
            let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path)
            let t1 = nowNs()
            let s0 = try Store(restoring: consume snapshot, storage: storage, sink: journal)
            let t2 = nowNs()
            loads.append(t1 - t0); restores.append(t2 - t1)
            try s0.close()
        }
        note("probe reopen: file \(Summary(ns: loads).median / 1000) ms, restore (mutations read and folded) \(Summary(ns: restores).median / 1000) ms")
        for _ in 0..<5 {
            var s: Store?
            opens.append(try timeNs { s = try Store.open(path: path) })
            counts.append(try timeNs { _ = try s!.pendingCount() })
            closes.append(try timeNs { try s!.close() })
        }
        note("probe reopen: open \(Summary(ns: opens).median / 1000) ms, pendingCount \(Summary(ns: counts).median / 1000) ms, close \(Summary(ns: closes).median / 1000) ms (medians of 5)")
    }

    static func durable(dir: String) throws {
        let s = try DurableBench.fresh(dir + "/probe-durable.optimist")
        var mutates = [UInt64](), flushes = [UInt64]()
        var seq = 0
        for _ in 0..<30 {
            mutates.append(try timeNs { for _ in 0..<10_000 { try s.mutate(DurableBench.op(seq, "b")); seq += 1 } })
            flushes.append(try timeNs { try s.flush() })
        }
        try s.close()
        let m = Summary(ns: mutates).median, f = Summary(ns: flushes).median
        note("probe durable: 10k mutates \(m / 1000) ms, then the flush \(f / 1000) ms: \(Int(10_000 / ((m + f) / 1e6))) mutations/s (medians of 30)")
    }

    static func getMiss(dir: String) throws {
        let n = 1_000_000
        let store = try Store.open(path: try file1M(dir: dir))
        var rng = Rand(seed: 7)
        let keys = (0..<50_000).map { _ in StorageBench.key(rng.below(n)) }
        let ns = try loop(keys) { k in _ = try store.get(coll, k) }
        note("probe get-miss: p50 \(Summary(ns: ns).median) µs")
        try store.close()
    }

    /// The readers bench's reader alone: an in-memory store of 100k records, more than its
    /// default cache holds, read in a cycle through all of them (so nearly every get misses
    /// the read cache and reads under the state lock), 2M gets.
    static func getCycle() throws {
        let store = Store()
        try store.serverApply(ReadersBench.batch(0))
        let records = ReadersBench.records
        let keys = (0..<records).map { ReadersBench.key(($0 &* 7919) % records) }
        var found = 0
        let t0 = nowNs()
        for _ in 0..<20 {
            for k in keys where try store.get("logs", k) != nil { found &+= 1 }
        }
        let ns = nowNs() &- t0
        note("probe get-cycle: \(Double(ns) / Double(20 * records)) ns a get (\(found) found)")
        try store.close()
    }

    /// The storage bench's tap (mutate + count view read, rolled back untimed) on the 1M file.
    static func tap1M(dir: String) throws {
        let store = try Store.open(path: try file1M(dir: dir))
        let today = Workload.day(Workload.todayIndex(n: 1_000_000))
        try store.defineView("today", collection: coll, prefix: Key(today + "/"), kind: .count)
        let seqs = Array(0..<50_000)
        let ns = try loopTimingFirst(seqs, { seq in
            let k = Key(Workload.key(day: today, habit: "t" + Workload.pad(seq % 8, 6)))
            let id = try store.mutate([.put(collection: coll, key: k, value: Workload.record(day: today, habit: "t", seq: seq))])
            _ = try store.viewValue("today")
            return id
        }, { id in try store.rollback(id) })
        note("probe tap-1m: p50 \(Summary(ns: ns).median) µs")
        try store.close()
    }

    static func file1M(dir: String) throws -> String {
        let path = dir + "/probe-1m.optimist"
        if access(path, F_OK) != 0 {
            let s = try Store.open(path: path)
            _ = try StorageBench.load(s, n: 1_000_000)
            try s.close()
        }
        return path
    }

    static func taps(_ name: String, dir: String) throws {
        let path = dir + "/probe-taps.optimist"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let store = try Store.open(path: path)
        try store.serverApply((0..<1000).map { DurableBench.op($0, "k")[0] })
        let count = 20_000
        switch name {
        case "mutate-new":
            let ops = (0..<count).map { DurableBench.op($0, "n") }
            let ns = try loop(ops) { op in _ = try store.mutate(op) }
            note("probe mutate-new: p50 \(Summary(ns: ns).median) µs")
        case "apply":
            var ids = [MutationID]()
            let ops = (0..<count).map { DurableBench.op($0 % 1000, "k") }
            let ns = try loop(ops) { op in ids.append(try store.mutate(op)) }
            note("probe apply: p50 \(Summary(ns: ns).median) µs")
        default:
            // One pending mutation at a time (as the core bench): mutate untimed, commit timed.
            let ops = (0..<count).map { DurableBench.op($0 % 1000, "k") }
            let ns = try loopTimingSecond(ops, { op in try store.mutate(op) }, { id in try store.commit(id) })
            note("probe commit: p50 \(Summary(ns: ns).median) µs")
        }
        try store.close()
    }

    /// `first` timed, then `second` on its result untimed.
    @inline(never) static func loopTimingFirst<T, U>(_ items: [T], _ first: (T) throws -> U, _ second: (U) throws -> Void) throws -> [UInt64] {
        var ns = [UInt64]()
        ns.reserveCapacity(items.count)
        for item in items {
            var u: U?
            ns.append(try timeNs { u = try first(item) })
            try second(u!)
        }
        return ns
    }

    /// `first` untimed, then `second` on its result timed.
    @inline(never) static func loopTimingSecond<T, U>(_ items: [T], _ first: (T) throws -> U, _ second: (U) throws -> Void) throws -> [UInt64] {
        var ns = [UInt64]()
        ns.reserveCapacity(items.count)
        for item in items {
            let u = try first(item)
            ns.append(try timeNs { try second(u) })
        }
        return ns
    }

    /// The measured loop (a function of its own, for callgrind's --toggle-collect).
    @inline(never) static func loop<T>(_ items: [T], _ body: (T) throws -> Void) throws -> [UInt64] {
        var ns = [UInt64]()
        ns.reserveCapacity(items.count)
        for item in items { ns.append(try timeNs { try body(item) }) }
        return ns
    }

    /// Five 100k-record server batches on one thread, each timed: staged (the default) or
    /// made whole under the state lock (`-whole`), in memory or on a file (`-file`).
    static func batches(_ name: String, dir: String) throws {
        let path = dir + "/probe-batches.optimist"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        let store = name.contains("file") ? try Store.open(path: path) : Store()
        if name.hasSuffix("whole") { store.stagingThreshold = .max }
        let batches = (0...5).map { ReadersBench.batch($0) }
        for (i, b) in batches.enumerated() {
            // batch-read: every record read between batches, as the readers bench's reader
            // does, so each batch after the first has a full read cache to put back.
            if name == "batch-read" { for k in 0..<ReadersBench.records { _ = try? store.get("logs", ReadersBench.key(k)) } }
            let ns = try timeNs { try store.serverApply(b) }
            note("probe \(name) batch \(i): \(Double(ns) / 1e6) ms")
        }
        for pass in 0..<3 {
            var ns = [UInt64]()
            for i in 0..<20_000 { ns.append(timeNs { _ = try? store.get("logs", ReadersBench.key((i &* 7919) % ReadersBench.records)) }) }
            note("probe \(name) get pass \(pass): p50 \(Summary(ns: ns).median) µs; cache \(store.cacheUsage)")
        }
        try store.close()
    }

    /// The typed bench's get or put, 20k times over 1k in-memory records (puts committed untimed).
    static func typed(_ name: String) throws {
        let store = Store()
        let logs = store.collection("logs", of: TypedBench.HabitLog.self)
        let values = (0..<1024).map(TypedBench.log)
        for i in 0..<1024 { try logs.put(values[i], at: TypedBench.key(i)) }
        for m in try store.mutations() { try store.commit(m.id) }
        let items = (0..<20_000).map { $0 % 1024 }
        var sink = 0
        var ids = [MutationID]()
        ids.reserveCapacity(items.count)
        let ns: [UInt64]
        switch name {
        case "typed-get": ns = try loop(items) { i in sink &+= try logs.get(TypedBench.key(i))?.minutes ?? 0 }
        case "hand-get": ns = try loop(items) { i in sink &+= try store.get(coll, TypedBench.key(i)).map(TypedBench.byHand)?.minutes ?? 0 }
        case "typed-put": ns = try loop(items) { i in ids.append(try logs.put(values[i], at: TypedBench.key(i))) }
        default: ns = try loop(items) { i in ids.append(try store.mutate([.put(collection: coll, key: TypedBench.key(i), value: try TypedBench.byHand(values[i]))])) }
        }
        for id in ids { try store.commit(id) }
        note("probe \(name): p50 \(Summary(ns: ns).median) µs [\(sink & 1)]")
        try store.close()
    }
}
