import Glibc
import Optimist

// optimist-bench [--quick|--full] [--only reload,core,rollback,durable,storage,typed,readers,reopen] [--dir DIR]
// (typed, the Codable API beside the untyped one, and readers, readers beside writers, run only
// when asked for with --only.)
// optimist-bench --probe NAME [DIR]   (one operation in a loop, for profilers: see Probe.swift)
// Prints one JSON object per line on stdout (collected by Benchmarks/run); progress on stderr.

/// Command-line options.
struct Config {
    var full = false
    var only: Set<String> = ["reload", "core", "rollback", "durable"]
    var dir = "/tmp/optimist-bench"

    static func parse() -> Config {
        var c = Config()
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let a = args.next() {
            switch a {
            case "--quick": c.full = false
            case "--full": c.full = true
            case "--only": c.only = Set((args.next() ?? "").split(separator: ",").map(String.init))
            case "--dir": c.dir = args.next() ?? c.dir
            default: note("unknown argument \(a)"); exit(2)
            }
        }
        return c
    }
}

/// Reload against optimistic for one n: both flows open side by side, warm-up taps of both
/// first, then `blocks` rounds of some reload taps followed by some optimistic taps, so a change
/// in the shared machine's load hits both alike. Each tap is followed by an untimed undo so
/// every tap sees the same n.
func reloadVsOptimistic(n: Int, full: Bool, dir: String) throws {
    let blocks = 10
    let reloadReps = (full ? max(10, min(600, 3_000_000 / n)) : max(20, min(500, 2_000_000 / n))) / blocks * blocks
    let optReps = full ? 10_000 : 5000
    note("swift reload/optimistic n=\(n): \(reloadReps) reload reps, \(optReps) optimistic reps")

    let reload = SQLiteReload(path: "\(dir)/reload-swift-\(n).db", n: n)
    let opt = try OptimisticFlow(path: "\(dir)/opt-swift-\(n).optimist", n: n)
    var reloads = [[UInt64](), [UInt64]()], os = [UInt64]()  // the heavy reload's taps, the lean one's
    var counts = [0, 0], viewCount = 0.0, rseq = 0, oseq = 0
    for block in -1..<blocks {  // block -1: warm-up, discarded
        // Both reloads in each block: the heavy one (every column), then the lean one.
        for (k, lean) in [false, true].enumerated() {
            for _ in 0..<(block < 0 ? max(2, reloadReps / 10) : reloadReps / blocks) {
                let p = Workload.pick(rseq, n: n)
                let t = timeNs { counts[k] = reload.tap(day: p.day, habit: p.habit, seq: rseq, lean: lean) }
                reload.undo(rseq, lean: lean)
                rseq += 1
                if block >= 0 { reloads[k].append(t) }
            }
        }
        for _ in 0..<(block < 0 ? optReps / 10 : optReps / blocks) {
            var id: MutationID = 0
            let p = Workload.pick(oseq, n: n)
            let t = try timeNs { (id, viewCount) = try opt.tap(day: p.day, habit: p.habit, seq: oseq) }
            try opt.undo(id)
            oseq += 1
            if block >= 0 { os.append(t) }
        }
    }
    try opt.close()
    let reloadCount = counts[0]
    precondition(Double(reloadCount) == viewCount && counts[1] == reloadCount,
                 "the reloads counted \(reloadCount) and \(counts[1]), the view says \(viewCount)")

    for (kind, sum) in [("reload", Summary(ns: reloads[0])), ("reload_lean", Summary(ns: reloads[1])), ("optimistic", Summary(ns: os))] {
        emit([("section", .str("reload_vs_optimistic")), ("host", .str("swift")), ("kind", .str(kind)), ("n", .int(n)),
              ("store", .str(kind.hasPrefix("reload") ? "sqlite" : (opt.fileBacked ? "file" : "memory"))),
              ("today_count", .int(reloadCount))] + sum.fields)
    }
}

// Child processes of the storage bench (fresh processes, so their RSS is theirs alone).
if CommandLine.arguments.count >= 3, CommandLine.arguments[1].hasPrefix("--child-") {
    let a = CommandLine.arguments
    do {
        switch a[1] {
        case "--child-open": try StorageBench.childOpen(a[2], a[3])
        case "--child-memory": try StorageBench.childMemory(Int(a[2]) ?? 0)
        default: note("unknown child \(a[1])"); exit(2)
        }
    } catch {
        note("child failed: \(error)")
        exit(1)
    }
    exit(0)
}

if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "--probe" {
    do { try Probe.run(CommandLine.arguments[2], dir: CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : "/tmp/optimist-bench") } catch {
        note("probe failed: \(error)")
        exit(1)
    }
    exit(0)
}

let config = Config.parse()
let full = config.full, dir = config.dir, only = config.only
mkdir(dir, 0o755)
do {
    if only.contains("reload") {
        for n in full ? [1_000, 10_000, 100_000, 1_000_000] : [1_000, 10_000, 100_000] { try reloadVsOptimistic(n: n, full: full, dir: dir) }
    }
    if only.contains("core") {
        for records in [1_000, 1_000_000] {
            for pending in [0, 10_000] {
                try CoreBench.run(records: records, pending: pending, samples: full ? 100_000 : 20_000, warmup: 2_000)
            }
        }
    }
    if only.contains("rollback") {
        try RollbackBench.run(records: 100_000, pendingCounts: [0, 10_000], samples: full ? 300 : 100, warmup: 5)
    }
    if only.contains("typed") {
        try TypedBench.run(records: 100_000, samples: full ? 100_000 : 20_000, warmup: 2_000)
    }
    if only.contains("durable") {
        _ = try DurableBench.run(dir: dir, batchReps: full ? 10 : 3, perOpReps: full ? 1000 : 200,
                                 reopenPending: 100_000, reopenReps: full ? 5 : 3)
    }
    if only.contains("readers") {
        try ReadersBench.run(dir: dir, repeats: full ? 5 : 3)
    }
    if only.contains("storage") {
        try StorageBench.run(dir: dir, n: full ? 1_000_000 : 1_000_000)
    } else if only.contains("reopen") {
        try StorageBench.reopen(dir: dir)  // the storage section's last row alone
    }
} catch {
    note("swift bench failed: \(error)")
    exit(1)
}
