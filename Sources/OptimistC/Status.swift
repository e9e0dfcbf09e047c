import OptimistModel

// Status you can see: the not-yet-ended mutations, and the layers of one record, as JSON.

/// The not-yet-ended mutations (all with 0, or those of one live status), in id order, as a
/// JSON array of ``MutationRecord/json`` objects.
@_cdecl("optimist_mutations")
public func optimist_mutations(_ handle: OpaquePointer?, _ statusOrZero: Int32,
                               _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outJSON, "out_json")
            var status: MutationStatus?
            if statusOrZero != 0 {
                guard let st = MutationStatus(rawValue: statusOrZero) else {
                    throw .misuse("status \(statusOrZero) is not 0 or OPTIMIST_PENDING, OPTIMIST_INFLIGHT, OPTIMIST_FAILED")
                }
                status = st
            }
            let list = try s.mutations(status: status)
            out.pointee = try handOut(JSONWriter.string(.array(list.map(\.json))))
        }
    }
}

/// One mutation, not yet ended or among the last 1,000 ended, as a ``MutationRecord/json``
/// object.
@_cdecl("optimist_mutation")
public func optimist_mutation(_ handle: OpaquePointer?, _ id: UInt64,
                              _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outJSON, "out_json")
            out.pointee = try handOut(JSONWriter.string(try s.mutation(id).json))
        }
    }
}

/// The record's confirmed value, its pending layers and its visible value, as JSON (see
/// ``Explanation/json``).
@_cdecl("optimist_explain")
public func optimist_explain(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                             _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), k = try key(k, "key")
            let out = try out(outJSON, "out_json")
            out.pointee = try handOut(JSONWriter.string(try s.explain(c, k).json))
        }
    }
}
