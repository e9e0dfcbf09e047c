import OptimistThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `(0..<count).map(transform)`, split over the machine's cores when there are many items.
///
/// Reopening a large store is dominated by parsing each stored mutation's ops from JSON; rows
/// are independent, so they parse in parallel (pthreads: the library stays free of
/// Foundation and Dispatch). `transform` must be safe to call from several threads at once.
func parallelMap<R>(count: Int, minimumPerThread: Int = 4096, _ transform: (Int) -> R) -> [R] {
    let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    let threads = max(1, min(cores, 8, count / minimumPerThread))
    if threads == 1 { return (0..<count).map(transform) }
    return withoutActuallyEscaping(transform) { transform in
        let out = UnsafeMutableBufferPointer<R>.allocate(capacity: count)
        defer { out.deallocate() }
        let chunk = (count + threads - 1) / threads
        let run = { (t: Int) in
            for i in (t * chunk)..<min(count, (t + 1) * chunk) { (out.baseAddress! + i).initialize(to: transform(i)) }
        }
        var started = [pthread_t]()
        var inline = [Int]()
        for t in 1..<threads {
            if let th = startThread({ run(t) }) { started.append(th) } else { inline.append(t) }
        }
        run(0)
        for t in inline { run(t) }
        for th in started { pthread_join(th, nil) }
        let result = Array(out)
        _ = out.baseAddress!.deinitialize(count: count)
        return result
    }
}
