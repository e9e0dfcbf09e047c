#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets a thread waiting for this CPU run now, between two steps of long background work (a
/// big server batch moving into the storage, the store file's writer writing it).
///
/// Without it, on a machine with fewer cores than busy threads, a reader that the scheduler
/// put behind a batch's two threads (the applier and the file's writer) waited a whole time
/// slice, milliseconds, for its next get. A yield when nothing else waits returns at once:
/// it costs a system call (under a microsecond) per step of tens of microseconds.
@inline(__always) package func letWaitingThreadsRun() {
    sched_yield()
}
