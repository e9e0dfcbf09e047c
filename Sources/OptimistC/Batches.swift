import OptimistModel

// Batches: the ops of one mutation (or one server change), built up one call at a time.
// Each add validates its arguments fully, so a batch only ever holds well-formed ops.

@_cdecl("optimist_batch_new")
public func optimist_batch_new(_ outBatch: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let out = try out(outBatch, "out")
        out.pointee = makeBatchHandle()
    }
}

@_cdecl("optimist_batch_free")
public func optimist_batch_free(_ handle: OpaquePointer?) {
    guard let handle else { return }
    freeBatchHandle(handle)
}

@_cdecl("optimist_batch_put")
public func optimist_batch_put(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        .put(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(json, "json"))
    }
}

@_cdecl("optimist_batch_patch")
public func optimist_batch_patch(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        .patch(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(json, "json"))
    }
}

@_cdecl("optimist_batch_delete")
public func optimist_batch_delete(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { () throws(OptimistError) in .delete(collection: try key(coll, "coll"), key: try key(k, "key")) }
}

@_cdecl("optimist_batch_incr")
public func optimist_batch_incr(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ field: UnsafePointer<CChar>?, _ delta: Double) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let op = Op.incr(collection: try key(coll, "coll"), key: try key(k, "key"), field: try key(field, "field"), delta: delta)
        guard delta.isFinite else { throw .invalid("delta must be a finite number") }
        return op
    }
}

/// Checks the batch handle, then appends the op `build` makes from the validated arguments;
/// on any failure the batch is unchanged. Every `optimist_batch_*` adder goes through here.
func appendOp(_ b: OpaquePointer?, _ build: () throws(OptimistError) -> Op) -> Int32 {
    guarded { () throws(OptimistError) in
        let box = try batchBox(b)
        box.ops.append(try build())
    }
}

/// The ops of a batch argument that must be given.
func ops(_ b: OpaquePointer?, _ what: StaticString) throws(OptimistError) -> [Op] {
    guard b != nil else { throw .misuse("\(what) is NULL") }
    return try batchBox(b).ops
}
