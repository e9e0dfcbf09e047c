import Glibc

/// Monotonic nanoseconds (CLOCK_MONOTONIC), the one clock every host's bench uses.
@inline(__always)
func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Times one call of `body`, in nanoseconds.
@inline(__always)
func timeNs(_ body: () throws -> Void) rethrows -> UInt64 {
    let t0 = nowNs()
    try body()
    return nowNs() &- t0
}

/// The calling thread's own CPU time and context switches (`getrusage(RUSAGE_THREAD)`): how
/// a reader's wall time splits into running, sleeping on a lock (a voluntary switch) and
/// being preempted (an involuntary one).
struct ThreadUsage {
    var cpuNs: UInt64, voluntary: Int, involuntary: Int

    static func now() -> ThreadUsage { read(__rusage_who_t(1)) }  // RUSAGE_THREAD, which Glibc does not import (a GNU extension)

    /// The whole process's (all its threads', the store's own included).
    static func process() -> ThreadUsage { read(__rusage_who_t(RUSAGE_SELF.rawValue)) }

    private static func read(_ who: __rusage_who_t) -> ThreadUsage {
        var u = rusage()
        getrusage(who, &u)
        let cpu = (UInt64(u.ru_utime.tv_sec) + UInt64(u.ru_stime.tv_sec)) &* 1_000_000_000
            &+ (UInt64(u.ru_utime.tv_usec) + UInt64(u.ru_stime.tv_usec)) &* 1000
        return ThreadUsage(cpuNs: cpu, voluntary: u.ru_nvcsw, involuntary: u.ru_nivcsw)
    }

    static func - (a: ThreadUsage, b: ThreadUsage) -> ThreadUsage {
        ThreadUsage(cpuNs: a.cpuNs &- b.cpuNs, voluntary: a.voluntary - b.voluntary, involuntary: a.involuntary - b.involuntary)
    }
}
