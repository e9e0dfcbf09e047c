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
