import OptimistModel

// The outbox: handing mutations to a sender, and what the sender reports back.

/// The oldest due pending mutation, now inflight: its id and its ops as a JSON array in wire
/// form. Nothing due: NOTFOUND.
@_cdecl("optimist_outbox_next")
public func optimist_outbox_next(_ handle: OpaquePointer?, _ now: Int64, _ outID: UnsafeMutablePointer<UInt64>?,
                                 _ outOps: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let idOut = try out(outID, "out_id"), opsOut = try out(outOps, "out_ops_json")
            guard let m = try s.outboxNext(now: now) else { throw .notFound("no mutation is due") }
            opsOut.pointee = try handOut(Op.encode(m.ops))
            idOut.pointee = m.id
        }
    }
}

@_cdecl("optimist_fail")
public func optimist_fail(_ handle: OpaquePointer?, _ id: UInt64, _ transient: Int32, _ reason: UnsafePointer<CChar>?,
                          _ now: Int64) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let r = try optionalText(reason, "reason")
            try s.fail(id, transient: transient != 0, reason: r, now: now)
        }
    }
}

@_cdecl("optimist_retry")
public func optimist_retry(_ handle: OpaquePointer?, _ id: UInt64) -> Int32 {
    guarded { () throws(OptimistError) in try withStore(handle) { s throws(OptimistError) in try s.retry(id) } }
}
