#if canImport(Glibc)
import Glibc
#endif
import OptimistModel
import OptimistCore
import OptimistOpen

func nowMs() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1e6
}

/// CPU time used by the whole process so far (all threads), in ms: unlike wall time, not
/// inflated when other processes compete for the cores.
func cpuMs() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000
}

/// The figures asked of file-backed stores: flushed mutations per second (batched and one by
/// one) and the time to reopen a store with `count` pending mutations.
func bench(path: String, count: Int) throws(OptimistError) {
    let s = try Store.open(path: path)
    var t = nowMs()
    for i in 0..<count {
        try s.mutate([.put(collection: "todos", key: Key("t\(i)"), value: ["title": "todo", "n": .number(Double(i))])])
    }
    let mutate = nowMs() - t
    t = nowMs()
    try s.flush()
    let flush = nowMs() - t
    let each = max(count / 100, 1)
    t = nowMs()
    for _ in 0..<each {
        try s.mutate([.incr(collection: "c", key: "k", field: "n", delta: 1)])
        try s.flush()
    }
    let eachMs = nowMs() - t
    try s.close()
    t = nowMs()
    let r = try Store.open(path: path)
    let reopen = nowMs() - t
    let pending = try r.pendingCount()
    try r.close()
    say("\(count) mutates: \(Int(mutate)) ms, then one flush: \(Int(flush)) ms -> \(Int(Double(count) / (mutate + flush) * 1000)) flushed mutations/s")
    say("\(each) x (mutate + flush): \(Int(eachMs)) ms -> \(Int(Double(each) / eachMs * 1000)) flushed mutations/s")
    say("reopen with \(pending) pending: \(Int(reopen)) ms")

    // Confirmed records only: server changes of 1,000 records each.
    let cpath = path + ".confirmed"
    let c = try Store.open(path: cpath)
    for chunk in stride(from: 0, to: count, by: 1000) {
        try c.serverApply((chunk..<min(count, chunk + 1000)).map {
            .put(collection: "todos", key: Key("t\($0)"), value: ["title": "todo", "n": .number(Double($0))])
        })
    }
    try c.close()
    t = nowMs()
    let rc = try Store.open(path: cpath)
    let reopenConfirmed = nowMs() - t
    let n = try rc.scan("todos").count
    try rc.close()
    say("reopen with \(n) confirmed records: \(Int(reopenConfirmed)) ms")
}
