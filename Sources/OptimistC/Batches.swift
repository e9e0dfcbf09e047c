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
    appendRecordOp(b, coll, k, Op.put(collection:key:value:)) { (depth, bytes) throws(OptimistError) in
        try record(json, "json", depth: &depth, bytes: &bytes)
    }
}

@_cdecl("optimist_batch_patch")
public func optimist_batch_patch(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    appendRecordOp(b, coll, k, Op.patch(collection:key:value:)) { (depth, bytes) throws(OptimistError) in
        try record(json, "json", depth: &depth, bytes: &bytes)
    }
}

@_cdecl("optimist_batch_delete")
public func optimist_batch_delete(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { (tally: inout Limits.Tally) throws(OptimistError) -> Op in
        var cb = 0, kb = 0
        let op = Op.delete(collection: try key(coll, "coll", count: &cb), key: try key(k, "key", count: &kb))
        tally.add(collection: cb, key: kb, depth: 0, valueBytes: 0)
        return op
    }
}

@_cdecl("optimist_batch_incr")
public func optimist_batch_incr(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ field: UnsafePointer<CChar>?, _ delta: Double) -> Int32 {
    appendOp(b) { (tally: inout Limits.Tally) throws(OptimistError) -> Op in
        var cb = 0, kb = 0, fb = 0
        let op = Op.incr(collection: try key(coll, "coll", count: &cb), key: try key(k, "key", count: &kb),
                         field: try key(field, "field", count: &fb), delta: delta)
        guard delta.isFinite else { throw .invalid("delta must be a finite number") }
        tally.add(collection: cb, key: kb, depth: 0, valueBytes: Limits.Tally.incrBytes(field: fb))
        return op
    }
}

/// Checks the batch handle, then appends the op `build` makes from the validated arguments,
/// and counts it in the batch's `Limits/Tally` (`build` adds to the tally it is given once
/// nothing can fail); on any failure the batch is unchanged. Every `optimist_batch_*` adder
/// goes through here. The limits on a mutation (`Limits`) are not checked here: a batch may
/// also carry a server's ops (`optimist_server_apply`, a commit's), which they do not bind; a
/// mutate of the batch checks them.
func appendOp(_ b: OpaquePointer?, _ build: (inout Limits.Tally) throws(OptimistError) -> Op) -> Int32 {
    guarded { () throws(OptimistError) in
        let box = try batchBox(b)
        var tally = box.tally
        box.ops.append(try build(&tally))
        box.tally = tally
    }
}

/// Appends the put or patch (`make`) of the record `value` reads, counting its collection, key,
/// nesting depth and size in the tally: what the JSON and the typed-fields adders share.
@inline(__always)
func appendRecordOp(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                    _ make: (Key, Key, Record) -> Op,
                    _ value: (_ depth: inout Int, _ bytes: inout Int) throws(OptimistError) -> Record) -> Int32 {
    appendOp(b) { (tally: inout Limits.Tally) throws(OptimistError) -> Op in
        var cb = 0, kb = 0, depth = 0, vb = 0
        let op = make(try key(coll, "coll", count: &cb), try key(k, "key", count: &kb), try value(&depth, &vb))
        tally.add(collection: cb, key: kb, depth: depth, valueBytes: vb)
        return op
    }
}

/// The ops of a batch argument that must be given.
func ops(_ b: OpaquePointer?, _ what: StaticString) throws(OptimistError) -> [Op] {
    guard b != nil else { throw .misuse("\(what) is NULL") }
    return try batchBox(b).ops
}
