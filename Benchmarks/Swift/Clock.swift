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

/// CPU time and voluntary context switches (`getrusage`): how a reader's wall time splits
/// into running and sleeping on a lock (a voluntary switch; a yield or a preemption is not
/// one), or how busy a process kept the machine's CPUs.
struct ThreadUsage {
    var cpuNs: UInt64, voluntary: Int

    /// The calling thread's.
    static func now() -> ThreadUsage { read(__rusage_who_t(1)) }  // RUSAGE_THREAD, which Glibc does not import (a GNU extension)

    /// The whole process's (all its threads', the store's own included).
    static func process() -> ThreadUsage { read(__rusage_who_t(RUSAGE_SELF.rawValue)) }

    private static func read(_ who: __rusage_who_t) -> ThreadUsage {
        var u = rusage()
        getrusage(who, &u)
        let cpu = (UInt64(u.ru_utime.tv_sec) + UInt64(u.ru_stime.tv_sec)) &* 1_000_000_000
            &+ (UInt64(u.ru_utime.tv_usec) + UInt64(u.ru_stime.tv_usec)) &* 1000
        return ThreadUsage(cpuNs: cpu, voluntary: u.ru_nvcsw)
    }

    static func - (a: ThreadUsage, b: ThreadUsage) -> ThreadUsage {
        ThreadUsage(cpuNs: a.cpuNs &- b.cpuNs, voluntary: a.voluntary - b.voluntary)
    }
}
