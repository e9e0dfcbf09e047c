import COptimist
import OptimistModel

// mutate, commit, rollback, server_apply.

// optimist_mutate and optimist_mutate_with_policy are optimist_mutate_ext with the options
// they take: all three end in mutate(...) below.

@_cdecl("optimist_mutate")
public func optimist_mutate(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                            _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    mutate(handle, b, dedupe, OPTIMIST_POLICY_ROLLBACK, outID)
}

@_cdecl("optimist_mutate_with_policy")
public func optimist_mutate_with_policy(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                                        _ policy: Int32, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    mutate(handle, b, dedupe, policy, outID)
}

@_cdecl("optimist_mutate_ext")
public func optimist_mutate_ext(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ opts: UnsafePointer<optimist_mutate_options>?,
                                _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guard let opts else { return mutate(handle, b, nil, OPTIMIST_POLICY_ROLLBACK, outID) }
    typealias O = optimist_mutate_options
    let raw = UnsafeRawPointer(opts)
    do {
        _ = try optionsVersion(raw, struct: "optimist_mutate_options", newest: OPTIMIST_MUTATE_OPTIONS_VERSION,
                               initMacro: "OPTIMIST_MUTATE_OPTIONS_INIT")
    } catch {
        return fail(error)
    }
    return mutate(handle, b, member(raw, \O.dedupe_key), member(raw, \O.policy), outID)
}

/// `outID` may be NULL (the caller does not need the id). On DUPLICATE it receives the id of
/// the mutation that holds the dedupe key.
private func mutate(_ handle: OpaquePointer?, _ b: OpaquePointer?, _ dedupe: UnsafePointer<CChar>?,
                    _ policy: Int32, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    let p: FailurePolicy
    switch policy {
    case OPTIMIST_POLICY_ROLLBACK: p = .rollback
    case OPTIMIST_POLICY_KEEP: p = .keep
    default: return fail(OPTIMIST_MISUSE, "policy must be OPTIMIST_POLICY_ROLLBACK (0) or OPTIMIST_POLICY_KEEP (1), not \(policy)")
    }
    return guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            guard b != nil else { throw .misuse("batch is NULL") }
            let box = try batchBox(b)
            let ops = box.ops
            let d = try optionalText(dedupe, "dedupe_key")
            // The adders tallied the ops: measured exactly only when that cannot tell.
            if !box.tally.isWithin { try Limits.check(ops) }
            do throws(OptimistError) {
                let id = try s.mutate(checked: ops, dedupeKey: d, policy: p)
                outID?.pointee = id
            } catch {
                if case .duplicate(let existing) = error { outID?.pointee = existing }
                throw error
            }
        }
    }
}

@_cdecl("optimist_commit")
public func optimist_commit(_ handle: OpaquePointer?, _ id: UInt64, _ serverOps: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let ops: [Op]? = serverOps == nil ? nil : try batchBox(serverOps).ops
            try s.commit(id, serverOps: ops)
        }
    }
}

/// optimist_commit after the authority's renames, given as JSON text (see
/// ``KeyRename/list(from:)``).
@_cdecl("optimist_commit_with_renames")
public func optimist_commit_with_renames(_ handle: OpaquePointer?, _ id: UInt64, _ serverOps: OpaquePointer?,
                                         _ renamesJSON: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let ops: [Op]? = serverOps == nil ? nil : try batchBox(serverOps).ops
            var renames: [KeyRename] = []
            if let text = try optionalText(renamesJSON, "renames_json") {
                let parsed: JSON
                do { parsed = try JSONParser.parse(text) } catch { throw .invalid("renames_json: \(error)") }
                do throws(OptimistError) { renames = try KeyRename.list(from: parsed) } catch {
                    throw .invalid("renames_json: \(error.message)")
                }
            }
            try s.commit(id, serverOps: ops, renames: renames)
        }
    }
}

@_cdecl("optimist_rollback")
public func optimist_rollback(_ handle: OpaquePointer?, _ id: UInt64, _ reason: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let r = try optionalText(reason, "reason")
            try s.rollback(id, reason: r)
        }
    }
}

@_cdecl("optimist_server_apply")
public func optimist_server_apply(_ handle: OpaquePointer?, _ b: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            try s.serverApply(try ops(b, "batch"))
        }
    }
}
