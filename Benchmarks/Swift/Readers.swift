import Glibc
import Optimist
import Synchronization

/// Readers beside writers (`--only readers`), on an in-memory store and on a store file:
///
/// - the longest `get` on one thread while another applies five 100k-record server batches
///   (each get timed alone; median, p99.9 and max over the reader's gets);
/// - gets per second on one thread alone, then beside one writer applying those batches, and
///   beside one writer making taps (mutate + commit);
/// - mutate + commit pairs per second on one thread, then on two threads (the same total),
///   and, as a control, on one thread while another spins without touching the store;
/// - single-threaded get and mutate + commit medians.
///
/// The batches and records are built before the clock starts, so the writer spends its time
/// in the store. Uses only the public API, so the same file runs against an older store.
enum ReadersBench {
    static let records = 100_000
    static func key(_ i: Int) -> Key { Key("k" + String(1_000_000 + i)) }
    static func batch(_ round: Int) -> [Op] {
        (0..<records).map { i in
            .put(collection: "logs", key: key(i), value: ["habit": .string("read"), "round": .number(Double(round)), "done": .bool(true)])
        }
    }

    static func run(dir: String, repeats: Int) throws {
        // READERS_KIND=memory or =file runs one kind only (for comparing commits on one).
        let only = getenv("READERS_KIND").map { String(cString: $0) }
        for kind in ["memory", "file"] where only == nil || only == kind {
            for rep in 0..<repeats {
                let path = "\(dir)/readers-\(kind)-\(rep).optimist"
                for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
                let cb = getenv("READERS_CACHE_MB").map { Int(atoi($0)) << 20 } ?? defaultCacheBytes
                let s = kind == "memory" ? try Store(cacheBytes: cb) : try Store.open(path: path, cacheBytes: cb)
                try s.serverApply(batch(0))
                try s.flush()
                // Each step starts with the store file's background writer idle (a flush), so
                // that it works only where the step makes it work.
                try longestGet(s, kind: kind, rep: rep)
                try s.flush()
                longestGetBesideSpin(s, kind: kind, rep: rep)
                longestGetBesideSpin(s, kind: kind, rep: rep, threads: 2)
                try readsPerSecond(s, kind: kind, rep: rep)
                try s.flush()
                try writerThroughput(s, kind: kind, rep: rep)
                try s.close()
                for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            }
        }
    }

    /// The reader's gets, each timed, while the writer applies five batches.
    static func longestGet(_ s: Store, kind: String, rep: Int) throws {
        let batches = (1...5).map { batch($0) }
        var writerNs: UInt64 = 0
        let gets = try timedGets(s) {
            let t0 = nowNs()
            for b in batches { try s.serverApply(b) }
            writerNs = nowNs() &- t0
        }
        report(gets, kind: kind, rep: rep, bench: "get_beside_batches", what: "longest get",
               extra: [("writer_ms", .num(Double(writerNs) / 1e6))])
    }

    /// The control: the same reader beside a thread that spins for a second without touching
    /// the store. Its longest get is what the machine's scheduler alone costs a reader.
    /// With `threads: 2`, beside two: as many busy threads as a big batch keeps on a store file
    /// (the one applying it and the file's writer), so three for two vCPUs.
    static func longestGetBesideSpin(_ s: Store, kind: String, rep: Int, threads: Int = 1) {
        let stop = Flag()
        let others = (1..<threads).map { _ in spawn { var y: UInt64 = 1; while !stop.isSet { y = spin(y) }; if y == 0 { print("") } } }
        var x: UInt64 = 1
        let (gets, ns) = try! timedGetsAndSpan(s) {
            let end = nowNs() + 1_000_000_000
            while nowNs() < end { x = spin(x) }
        }
        stop.set()
        for t in others { join(t) }
        let bench = threads == 1 ? "get_beside_spin" : "get_beside_two_spins"
        let what = threads == 1 ? "control: longest get beside a spinning thread" : "control: longest get beside two spinning threads"
        report(gets, kind: kind, rep: rep, bench: bench, what: "\(what) [\(x & 1)]",
               extra: [("gets_per_second", .num(Double(gets.count) / (Double(ns) / 1e9)))])
    }

    /// A thousand steps of arithmetic that never touch memory.
    static func spin(_ x: UInt64) -> UInt64 {
        var x = x
        for _ in 0..<1000 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
        return x
    }

    /// Each get of a reader thread timed alone, while `work` runs on this thread.
    static func timedGets(_ s: Store, while work: () throws -> Void) throws -> [UInt64] {
        try timedGetsAndSpan(s, while: work).gets
    }

    /// The same, with the wall time `work` took: the gets counted are those made meanwhile.
    static func timedGetsAndSpan(_ s: Store, while work: () throws -> Void) throws -> (gets: [UInt64], ns: UInt64) {
        let stop = Flag(), started = Flag()
        var gets = [UInt64]()
        gets.reserveCapacity(8_000_000)
        let reader = spawn {
            var i = 0
            while !stop.isSet {
                let k = key((i &* 7919) % records)
                let t0 = nowNs()
                _ = try? s.get("logs", k)
                let t1 = nowNs()
                if started.isSet { gets.append(t1 &- t0) }
                i += 1
            }
        }
        usleep(20_000)
        var failure: (any Error)?
        let t0 = nowNs()
        started.set()
        do { try work() } catch { failure = error }
        stop.set()
        let ns = nowNs() &- t0
        join(reader)  // before `gets` is read: the reader appends to it until here
        if let failure { throw failure }
        return (gets, ns)
    }

    static func report(_ gets: [UInt64], kind: String, rep: Int, bench: String, what: String, extra: [(String, JSONValue)] = []) {
        let sum = Summary(ns: gets)
        let sorted = gets.sorted()
        let p999 = Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.999))]) / 1000
        // How many gets took over 1 ms: beside the control's count, what the store added to
        // what the scheduler costs anyway.
        let over = gets.count - (sorted.firstIndex { $0 > 1_000_000 } ?? gets.count)
        note("readers \(kind) #\(rep): \(what) \(sum.max) µs (median \(sum.median), p99.9 \(p999), \(over) over 1 ms) over \(gets.count) gets")
        emit([("section", .str("readers")), ("bench", .str(bench)), ("store", .str(kind)), ("rep", .int(rep)),
              ("p999_us", .num(p999)), ("over_1ms", .int(over))] + extra + sum.fields)
    }

    /// Gets per second alone, beside batches, beside taps.
    static func readsPerSecond(_ s: Store, kind: String, rep: Int) throws {
        typealias Reading = (count: Int, ns: UInt64, usage: ThreadUsage)
        func readFor(_ stop: Flag) -> Reading {
            var n = 0
            let u0 = ThreadUsage.now()
            let t0 = nowNs()
            while !stop.isSet {
                for j in 0..<64 { _ = try? s.get("logs", key(((n + j) &* 7919) % records)) }
                n += 64
            }
            let ns = nowNs() &- t0
            return (n, ns, ThreadUsage.now() - u0)
        }
        let none: Reading = (0, 0, ThreadUsage(cpuNs: 0, voluntary: 0))
        // Alone, for 0.4 s.
        let aloneStop = Flag()
        var alone = none
        let a = spawn { alone = readFor(aloneStop) }
        usleep(400_000)
        aloneStop.set()
        join(a)
        // Beside batches.
        let batches = (6...8).map { batch($0) }
        try s.flush()
        let bStop = Flag()
        var besideBatches = none
        let b = spawn { besideBatches = readFor(bStop) }
        for x in batches { try s.serverApply(x) }
        bStop.set()
        join(b)
        // Beside taps, for 0.4 s.
        try s.flush()
        let tStop = Flag()
        var besideTaps = none
        let values = (0..<4096).map { i -> Record in ["habit": .string("read"), "n": .number(Double(i))] }
        let t = spawn { besideTaps = readFor(tStop) }
        let tEnd = nowNs() + 400_000_000
        var i = 0
        while nowNs() < tEnd {
            let id = try s.mutate([.put(collection: "taps", key: key(i % 4096), value: values[i % 4096])])
            try s.commit(id)
            i += 1
        }
        tStop.set()
        join(t)
        func rate(_ r: Reading) -> Double { Double(r.count) / (Double(r.ns) / 1e9) }
        // Where a reader's wall time went: the share it ran (the rest it slept, on a lock or
        // for a CPU: two vCPUs shared by up to three busy threads), gets per second of its
        // own CPU time, and its voluntary context switches per second (a sleep on a lock;
        // a yield or a preemption counts as involuntary).
        func cpuShare(_ r: Reading) -> Double { Double(r.usage.cpuNs) / Double(r.ns) }
        func cpuRate(_ r: Reading) -> Double { Double(r.count) / (Double(max(1, r.usage.cpuNs)) / 1e9) }
        func sleeps(_ r: Reading) -> Double { Double(r.usage.voluntary) / (Double(r.ns) / 1e9) }
        let ra = rate(alone), rb = rate(besideBatches), rt = rate(besideTaps)
        note("readers \(kind) #\(rep): gets/s alone \(Int(ra)), beside batches \(Int(rb)) (\(Int(rb / ra * 100))%), beside taps \(Int(rt)) (\(Int(rt / ra * 100))%); reader ran \(Int(cpuShare(alone) * 100))% / \(Int(cpuShare(besideBatches) * 100))% / \(Int(cpuShare(besideTaps) * 100))% of the time, slept on a lock \(Int(sleeps(alone))) / \(Int(sleeps(besideBatches))) / \(Int(sleeps(besideTaps))) times a second")
        emit([("section", .str("readers")), ("bench", .str("gets_per_second")), ("store", .str(kind)), ("rep", .int(rep)),
              ("alone", .num(ra)), ("beside_batches", .num(rb)), ("beside_taps", .num(rt)),
              ("ratio_batches", .num(rb / ra)), ("ratio_taps", .num(rt / ra)),
              ("cpu_share_alone", .num(cpuShare(alone))), ("cpu_share_batches", .num(cpuShare(besideBatches))),
              ("cpu_share_taps", .num(cpuShare(besideTaps))),
              ("cpu_ratio_batches", .num(cpuRate(besideBatches) / cpuRate(alone))),
              ("cpu_ratio_taps", .num(cpuRate(besideTaps) / cpuRate(alone))),
              ("sleeps_per_s_alone", .num(sleeps(alone))), ("sleeps_per_s_batches", .num(sleeps(besideBatches))),
              ("sleeps_per_s_taps", .num(sleeps(besideTaps)))])
    }

    /// Mutate + commit pairs per second, one thread against two.
    ///
    /// This machine's speed drifts by tens of percent over seconds (a shared virtual machine),
    /// so the three ways are run in short rounds, side by side, in a rotating order, and each
    /// figure is the median over the rounds of its ratio within the round. Each way writes its
    /// own 8,192 keys, all made by an untimed first round, so that every timed pair updates a
    /// record (none grows the store).
    static func writerThroughput(_ s: Store, kind: String, rep: Int) throws {
        let rounds = 10, total = 20_000
        let values = (0..<4096).map { i -> Record in ["habit": .string("read"), "n": .number(Double(i))] }
        func taps(_ range: Range<Int>, _ prefix: String) {
            for i in range {
                // Each writer builds its record and key, as an app would, outside the store.
                let k = Key(prefix + String(i % 8192))
                if let id = try? s.mutate([.put(collection: "taps", key: k, value: values[i % 4096])]) { try? s.commit(id) }
            }
        }
        // Pairs a second, and the process's CPU time beside the wall time (the store file's
        // background writer included, up to the flush): how busy the machine's vCPUs were,
        // and whether two threads cost more CPU per pair than one.
        typealias Way = (rate: Double, busy: Double, cpuNsPerPair: Double)
        func measured(_ run: () -> Void) throws -> Way {
            let u0 = ThreadUsage.process(), t0 = nowNs()
            run()
            let rate = Double(total) / (Double(nowNs() &- t0) / 1e9)
            try s.flush()
            let cpu = Double((ThreadUsage.process() - u0).cpuNs)
            return (rate, cpu / Double(nowNs() &- t0), cpu / Double(total))
        }
        func one() throws -> Way { try measured { taps(0..<total, "a") } }
        func two() throws -> Way {
            try measured {
                let w1 = spawn { taps(0..<(total / 2), "b") }
                let w2 = spawn { taps((total / 2)..<total, "c") }
                join(w1)
                join(w2)
            }
        }
        // The control: one writer while a second thread spins without touching the store, so
        // that both vCPUs are busy. What the machine alone takes from a writer when the other
        // core works too: two writers cannot beat it by more than their parallel share.
        func besideSpin() throws -> Way {
            let spinStop = Flag()
            let spinner = spawn {
                var x: UInt64 = 1
                while !spinStop.isSet { x = spin(x) }
                if x == 0 { print("") }
            }
            defer { spinStop.set(); join(spinner) }
            return try measured { taps(0..<total, "d") }
        }
        for prefix in ["a", "b", "c", "d"] { taps(0..<8192, prefix) }  // every way's keys, untimed
        var ones = [Way](), twos = [Way](), spins = [Way]()
        for round in 0..<rounds {
            for way in 0..<3 {
                switch (round + way) % 3 {
                case 0: ones.append(try one())
                case 1: twos.append(try two())
                default: spins.append(try besideSpin())
                }
            }
        }
        func median(_ xs: [Double]) -> Double { let v = xs.sorted(); return v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2 }
        let ratio = median((0..<rounds).map { twos[$0].rate / ones[$0].rate })
        let spinRatio = median((0..<rounds).map { spins[$0].rate / ones[$0].rate })
        let oneRate = median(ones.map(\.rate)), twoRate = median(twos.map(\.rate)), spinRate = median(spins.map(\.rate))
        let one = (rate: oneRate, busy: median(ones.map(\.busy)), cpuNsPerPair: median(ones.map(\.cpuNsPerPair)))
        let two = (rate: twoRate, busy: median(twos.map(\.busy)), cpuNsPerPair: median(twos.map(\.cpuNsPerPair)))
        // Single-threaded medians (the store file's writer idle: `measured` flushed).
        var getNs = [UInt64](), tapNs = [UInt64]()
        // Gets of 4096 records, read once untimed first: all in the cache whatever the
        // history, so the figure compares the read path itself.
        for i in 0..<4096 { _ = try? s.get("logs", key(i &* 13)) }
        for i in 0..<20_000 { getNs.append(timeNs { _ = try? s.get("logs", key((i % 4096) &* 13)) }) }
        for i in 0..<20_000 {
            tapNs.append(timeNs {
                if let id = try? s.mutate([.put(collection: "taps", key: key(i % 4096), value: values[i % 4096])]) { try? s.commit(id) }
            })
        }
        let g = Summary(ns: getNs), m = Summary(ns: tapNs)
        note("readers \(kind) #\(rep): mutate+commit/s one thread \(Int(one.rate)), two threads \(Int(two.rate)) (\(Int(ratio * 100))%), one beside a spinning thread \(Int(spinRate)) (\(Int(spinRatio * 100))%) (medians of \(rounds) rounds), CPUs busy \(one.busy) / \(two.busy), CPU per pair \(Int(one.cpuNsPerPair)) / \(Int(two.cpuNsPerPair)) ns; get median \(g.median) µs, mutate+commit median \(m.median) µs")
        emit([("section", .str("readers")), ("bench", .str("writers")), ("store", .str(kind)), ("rep", .int(rep)),
              ("one_thread", .num(one.rate)), ("two_threads", .num(two.rate)), ("ratio", .num(ratio)),
              ("one_thread_beside_spin", .num(spinRate)), ("ratio_beside_spin", .num(spinRatio)), ("rounds", .int(rounds)),
              ("cpus_busy_one", .num(one.busy)), ("cpus_busy_two", .num(two.busy)),
              ("cpu_ns_per_pair_one", .num(one.cpuNsPerPair)), ("cpu_ns_per_pair_two", .num(two.cpuNsPerPair)),
              ("get_median_us", .num(g.median)), ("mutate_commit_median_us", .num(m.median))])
    }

    // MARK: Threads (the bench stays free of Foundation)

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    final class Box { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }

    static func spawn(_ body: @escaping () -> Void) -> pthread_t {
        var t = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        pthread_create(&t, nil, { p in
            let b = Unmanaged<Box>.fromOpaque(p!).takeRetainedValue()
            b.body()
            return nil
        }, box)
        return t
    }

    static func join(_ t: pthread_t) { pthread_join(t, nil) }
}
