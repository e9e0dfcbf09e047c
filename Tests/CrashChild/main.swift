#if canImport(Glibc)
import Glibc
#endif
import OptimistModel
import OptimistC
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel

/// The child process the crash tests kill with SIGKILL.
///
///     optimist-crash-child run PATH SEED STEPS    runs the workload on a store file, flushing at
///                                                 known steps; prints "flushed STEP" after each
///                                                 flush returned, "done" at the end, then waits
///     optimist-crash-child model SEED STEPS       replays it in memory; prints
///                                                 "STEP MAXID FINGERPRINT" after each step (0 first)
///     optimist-crash-child dump PATH              opens a store file and prints
///                                                 "MAXID FINGERPRINT" of its state
///     optimist-crash-child hold PATH              opens a store file, prints "open", waits
///     optimist-crash-child burst PATH N           N mutates, flush, "flushed N", then N more
///                                                 (big unflushed batches), "queued 2N", waits
///     optimist-crash-child reopen PATH [N]        times opening a store file (best and median of N)
///     optimist-crash-child bench PATH N           times N mutates + one flush, N x (mutate +
///                                                 flush) for N/100, and a reopen with N pending
///                                                 (build with -c release for real figures)

/// Writes a line straight to file descriptor 1: no buffering, so a line the parent reads was
/// written before the child died.
func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + off, $0.count - off) }
        if n <= 0 { exit(4) }
        off += n
    }
}

func fatal(_ message: String) -> Never {
    var bytes = Array("crash child: \(message)\n".utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(3)
}

/// The highest id handed out (ids are dense: every id below it is live or ended).
func maxID(_ s: Store, from known: MutationID = 0) -> MutationID {
    var id = known
    while (try? s.status(id + 1)) != nil { id += 1 }
    return id
}

let args = CommandLine.arguments
guard args.count >= 3 else { fatal("usage: run PATH SEED STEPS | model SEED STEPS | dump PATH | hold PATH") }

switch args[1] {
case "run":
    guard args.count == 5, let seed = UInt64(args[3]), let steps = Int(args[4]) else { fatal("run PATH SEED STEPS") }
    let store: Store
    do { store = try Store.open(path: args[2]) } catch { fatal("open: \(error)") }
    var w = Workload(seed: seed)
    for step in 1...steps {
        if let e = w.run(step: step, on: store) { fatal("step \(step): \(e)") }
        if Workload.flushes(after: step, seed: seed) || step == steps {
            do { try store.flush() } catch { fatal("flush at \(step): \(error)") }
            say("flushed \(step)")
        }
    }
    say("done")
    while true { pause() }
case "model":
    guard args.count == 4, let seed = UInt64(args[2]), let steps = Int(args[3]) else { fatal("model SEED STEPS") }
    let store = Store()
    var w = Workload(seed: seed)
    var ended = [MutationID: UInt64]()
    var top: MutationID = 0
    do {
        say("0 0 \(String(fingerprint(try dump(store, ended: &ended)), radix: 16))")
        for step in 1...steps {
            if let e = w.run(step: step, on: store) { fatal("model step \(step): \(e)") }
            top = maxID(store, from: top)
            say("\(step) \(top) \(String(fingerprint(try dump(store, ended: &ended)), radix: 16))")
        }
    } catch { fatal("model: \(error)") }
case "dump":
    do {
        let store = try Store.open(path: args[2])
        var ended = [MutationID: UInt64]()
        say("\(maxID(store)) \(String(fingerprint(try dump(store, ended: &ended)), radix: 16))")
        try store.close()
    } catch { fatal("dump: \(error)") }
case "hold":
    let held: Store
    do { held = try Store.open(path: args[2]) } catch { say("error \(error.code)"); exit(0) }
    say("open")
    withExtendedLifetime(held) { while true { pause() } }
case "burst":
    guard args.count == 4, let n = Int(args[3]) else { fatal("burst PATH N") }
    do {
        let s = try Store.open(path: args[2])
        for i in 0..<n { try s.mutate([.put(collection: "burst", key: Key("a\(i)"), value: ["i": .number(Double(i))])]) }
        try s.flush()
        say("flushed \(n)")
        for i in 0..<n {
            try s.mutate([.put(collection: "burst", key: Key("b\(i)"), value: ["i": .number(Double(i))]),
                          .incr(collection: "burst", key: "count", field: "n", delta: 1)])
        }
        say("queued \(2 * n)")
        withExtendedLifetime(s) { while true { pause() } }
    } catch { fatal("burst: \(error)") }
case "reopen":
    // Best and median of several opens: the best approximates an idle machine.
    let rounds = args.count > 3 ? Int(args[3]) ?? 1 : 1
    var totals = [Double](), files = [Double](), cpus = [Double](), fileCPUs = [Double]()
    do {
        for _ in 0..<rounds {
            let t = nowMs(), cpu = cpuMs()
            let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: args[2])
            let loaded = nowMs()
            fileCPUs.append(cpuMs() - cpu)
            let s = try Store(restoring: snapshot, storage: storage, sink: journal)
            totals.append(nowMs() - t)
            cpus.append(cpuMs() - cpu)
            files.append(loaded - t)
            if rounds == 1 { say("\(try s.pendingCount()) pending") }
            try s.close()
        }
    } catch { fatal("reopen: \(error)") }
    let order = totals.indices.sorted { totals[$0] < totals[$1] }
    let best = order[0], median = order[order.count / 2]
    say("reopen: best \(Int(totals[best])) ms (file \(Int(files[best])) ms + store \(Int(totals[best] - files[best])) ms), median \(Int(totals[median])) ms, of \(rounds); CPU time (all threads) best \(Int(cpus.min()!)) ms (file \(Int(fileCPUs.min()!)) ms)")
case "bench":
    guard args.count == 4, let n = Int(args[3]) else { fatal("bench PATH N") }
    do { try bench(path: args[2], count: n) } catch { fatal("bench: \(error)") }
default:
    fatal("unknown mode \(args[1])")
}
