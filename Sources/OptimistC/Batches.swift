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
        let (c, k) = (try name(coll, "coll"), try name(k, "key"))
        let r = try measuredRecord(json, "json")
        return (.put(collection: c.key, key: k.key, value: r.record), c.bytes, k.bytes, r.depth, r.bytes)
    }
}

@_cdecl("optimist_batch_patch")
public func optimist_batch_patch(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let (c, k) = (try name(coll, "coll"), try name(k, "key"))
        let r = try measuredRecord(json, "json")
        return (.patch(collection: c.key, key: k.key, value: r.record), c.bytes, k.bytes, r.depth, r.bytes)
    }
}

@_cdecl("optimist_batch_delete")
public func optimist_batch_delete(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let (c, k) = (try name(coll, "coll"), try name(k, "key"))
        return (.delete(collection: c.key, key: k.key), c.bytes, k.bytes, 0, 0)
    }
}

@_cdecl("optimist_batch_incr")
public func optimist_batch_incr(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ field: UnsafePointer<CChar>?, _ delta: Double) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let (c, k, f) = (try name(coll, "coll"), try name(k, "key"), try name(field, "field"))
        let op = Op.incr(collection: c.key, key: k.key, field: f.key, delta: delta)
        guard delta.isFinite else { throw .invalid("delta must be a finite number") }
        return (op, c.bytes, k.bytes, 0, Limits.Tally.incrBytes(field: f.bytes))
    }
}

/// An op an adder built, with what its ``Limits/Tally`` counts: the byte counts of its
/// collection and key, its value's nesting (0: none) and an upper bound of its value's text.
typealias MeasuredOp = (op: Op, collection: Int, key: Int, depth: Int, valueBytes: Int)

/// Checks the batch handle, then appends the op `build` makes from the validated arguments;
/// on any failure the batch is unchanged. Every `optimist_batch_*` adder goes through here.
/// The limits on a mutation (``Limits``) are not checked here: a batch may also carry a
/// server's ops (`optimist_server_apply`, a commit's), which they do not bind; a mutate of
/// the batch checks them.
func appendOp(_ b: OpaquePointer?, _ build: () throws(OptimistError) -> MeasuredOp) -> Int32 {
    guarded { () throws(OptimistError) in
        let box = try batchBox(b)
        let m = try build()
        box.ops.append(m.op)
        box.tally.add(collection: m.collection, key: m.key, depth: m.depth, valueBytes: m.valueBytes)
    }
}

/// The ops of a batch argument that must be given.
func ops(_ b: OpaquePointer?, _ what: StaticString) throws(OptimistError) -> [Op] {
    guard b != nil else { throw .misuse("\(what) is NULL") }
    return try batchBox(b).ops
}
