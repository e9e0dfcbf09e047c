import Optimist

// mutate, commit, rollback, server_apply.

@_cdecl("optimist_mutate")
public func optimist_mutate(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                            _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    mutate(handle, b, dedupe, .rollback, outID)
}

@_cdecl("optimist_mutate_with_policy")
public func optimist_mutate_with_policy(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                                        _ policy: Int32, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guard let p = FailurePolicy(rawValue: policy) else {
        return fail(RC.misuse, "policy must be OPTIMIST_POLICY_ROLLBACK (0) or OPTIMIST_POLICY_KEEP (1), not \(policy)")
    }
    return mutate(handle, b, dedupe, p, outID)
}

/// `outID` may be NULL (the caller does not need the id). On DUPLICATE it receives the id of
/// the mutation that holds the dedupe key.
private func mutate(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                    _ policy: FailurePolicy, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let ops = try ops(b, "batch")
        let d = try optionalText(dedupe, "dedupe_key")
        do throws(OptimistError) {
            let id = try s.mutate(ops, dedupeKey: d, policy: policy)
            outID?.pointee = id
        } catch {
            if case .duplicate(let existing) = error { outID?.pointee = existing }
            throw error
        }
    }
}

@_cdecl("optimist_commit")
public func optimist_commit(_ handle: OpaquePointer?, _ id: UInt64, _ serverOps: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let ops: [Op]? = serverOps == nil ? nil : try batchBox(serverOps).ops
        try s.commit(id, serverOps: ops)
    }
}

@_cdecl("optimist_rollback")
public func optimist_rollback(_ handle: OpaquePointer?, _ id: UInt64, _ reason: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let r = try optionalText(reason, "reason")
        try s.rollback(id, reason: r)
    }
}

@_cdecl("optimist_server_apply")
public func optimist_server_apply(_ handle: OpaquePointer?, _ b: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        try s.serverApply(try ops(b, "batch"))
    }
}
