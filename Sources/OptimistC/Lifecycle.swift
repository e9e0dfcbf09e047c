#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import COptimist
import OptimistCore
import OptimistOpen
import OptimistModel

// Opening, flushing and closing stores; the client id; the retry policy.

@_cdecl("optimist_open")
public func optimist_open(_ path: UnsafePointer<CChar>?, _ outStore: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let out = try out(outStore, "out")
        let p = try optionalText(path, "path")
        let s = try Store.open(path: p)
        out.pointee = makeStoreHandle(s)
    }
}

@_cdecl("optimist_open_ext")
public func optimist_open_ext(_ path: UnsafePointer<CChar>?, _ opts: UnsafePointer<optimist_open_options>?,
                              _ outStore: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let out = try out(outStore, "out")
        let p = try optionalText(path, "path")
        var cacheBytes = defaultCacheBytes
        var retryPolicy = RetryPolicy()
        var localOnly = false
        var readOnly = false
        if let opts {
            typealias O = optimist_open_options
            let raw = UnsafeRawPointer(opts)
            let version = try optionsVersion(raw, struct: "optimist_open_options", newest: OPTIMIST_OPEN_OPTIONS_VERSION,
                                             initMacro: "OPTIMIST_OPEN_OPTIONS_INIT")
            let bytes = UInt(bitPattern: member(raw, \O.cache_bytes))
            guard bytes > 0 else { throw .misuse("optimist_open_options.cache_bytes must be positive (the default is OPTIMIST_CACHE_BYTES_DEFAULT)") }
            cacheBytes = bytes > UInt(maximumCacheBytes) ? maximumCacheBytes : Int(bytes)
            if version >= 2 {
                retryPolicy = try checkedRetryPolicy(member(raw, \O.max_attempts), member(raw, \O.base_delay_ms),
                                                     member(raw, \O.max_delay_ms))
            }
            if version >= 3 {
                let flag: Int32 = member(raw, \O.local_only)
                guard flag == 0 || flag == 1 else { throw .misuse("optimist_open_options.local_only must be 0 or 1 (got \(flag))") }
                localOnly = flag == 1
                let ro: Int32 = member(raw, \O.read_only)
                guard ro == 0 || ro == 1 else { throw .misuse("optimist_open_options.read_only must be 0 or 1 (got \(ro))") }
                readOnly = ro == 1
            }
        }
        let s = try Store.open(path: p, retryPolicy: retryPolicy, cacheBytes: cacheBytes, localOnly: localOnly, readOnly: readOnly)
        out.pointee = makeStoreHandle(s)
    }
}

/// Flushes and closes, then drops the store. The handle stays a tombstone (see Handles.swift),
/// so closing again returns OK and any other call returns MISUSE.
@_cdecl("optimist_close")
public func optimist_close(_ handle: OpaquePointer?) -> Int32 {
    guard handle != nil else { return OPTIMIST_OK }
    return guarded { () throws(OptimistError) in
        // Closed even when the final flush fails; the result code tells the caller.
        try anyStore(handle).close()
    }
}

@_cdecl("optimist_flush")
public func optimist_flush(_ handle: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in try withStore(handle) { s throws(OptimistError) in try s.flush() } }
}

@_cdecl("optimist_client_id")
public func optimist_client_id(_ handle: OpaquePointer?, _ outID: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outID, "out")
            out.pointee = try handOut(s.clientID)
        }
    }
}

@_cdecl("optimist_set_retry_policy")
public func optimist_set_retry_policy(_ handle: OpaquePointer?, _ maxAttempts: Int32, _ baseDelayMs: Int64, _ maxDelayMs: Int64) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let policy = try checkedRetryPolicy(maxAttempts, baseDelayMs, maxDelayMs)
            guard !s.isClosed else { throw .misuse("the store is closed") }
            s.retryPolicy = policy
        }
    }
}

/// A retry policy from C: at least one attempt, no negative delay.
private func checkedRetryPolicy(_ maxAttempts: Int32, _ baseDelayMs: Int64, _ maxDelayMs: Int64)
    throws(OptimistError) -> RetryPolicy {
    guard maxAttempts >= 1 else { throw .misuse("max_attempts must be at least 1") }
    guard baseDelayMs >= 0, maxDelayMs >= 0 else { throw .misuse("delays must not be negative") }
    return RetryPolicy(maxAttempts: Int(maxAttempts), baseDelayMs: baseDelayMs, maxDelayMs: maxDelayMs)
}
