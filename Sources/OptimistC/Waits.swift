import OptimistModel

// Waiting without polling: one mutation's end, and work for a sender the app drives.

/// Waits for mutation `id` to settle for up to `timeout_ms` (negative: no limit) and writes
/// its status then: the final one, or PENDING/INFLIGHT when the time passed first.
@_cdecl("optimist_wait_settled")
public func optimist_wait_settled(_ handle: OpaquePointer?, _ id: UInt64, _ timeoutMs: Int64,
                                  _ outStatus: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outStatus, "out_status")
            let status: MutationStatus
            if let settled = try s.waitSettled(id, timeoutMs: timeoutMs) { status = settled } else { status = try s.status(id) }
            out.pointee = status.rawValue
        }
    }
}

/// Waits for up to `timeout_ms` (negative: no limit) until some mutation is pending; writes 1
/// if one is, 0 if the time passed first.
@_cdecl("optimist_outbox_wait")
public func optimist_outbox_wait(_ handle: OpaquePointer?, _ timeoutMs: Int64, _ outReady: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outReady, "out_ready")
            out.pointee = try s.outboxWait(timeoutMs: timeoutMs) ? 1 : 0
        }
    }
}
