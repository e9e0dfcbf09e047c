import COptimist
import OptimistModel

// One-op mutations: a tap that puts one record needs no batch object. Each is
// optimist_mutate of a batch holding that one put, with the default options, minus the
// batch's allocation and handle checks.

@_cdecl("optimist_put")
public func optimist_put(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                         _ json: UnsafePointer<CChar>?, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { (depth: inout Int, bytes: inout Int) throws(OptimistError) in
        try record(json, "json", depth: &depth, bytes: &bytes)
    }
}

@_cdecl("optimist_put_fields")
public func optimist_put_fields(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ fields: UnsafePointer<optimist_field>?, _ count: Int,
                                _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { (depth: inout Int, bytes: inout Int) throws(OptimistError) in
        depth = 1
        return try record(fields: fields, count: count, bytes: &bytes)
    }
}

/// Checks the store and the address, then mutates with one put of the record `value` makes
/// (validated in the order the batch adders use: collection, key, record; `value` writes its
/// nesting and an upper bound of its text), after the limits (`Limits`) from what validating
/// measured: exactly only when that cannot tell.
private func putOne(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                    _ outID: UnsafeMutablePointer<UInt64>?,
                    _ value: (_ depth: inout Int, _ bytes: inout Int) throws(OptimistError) -> Record) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            var cb = 0, kb = 0, depth = 0, vb = 0
            let (c, k, v) = (try key(coll, "coll", count: &cb), try key(k, "key", count: &kb), try value(&depth, &vb))
            var tally = Limits.Tally()
            tally.add(collection: cb, key: kb, depth: depth, valueBytes: vb)
            if !tally.isWithin { try overLimits(c, k, v) }
            outID?.pointee = try s.mutate(checkedPut: c, k, v)
        }
    }
}

/// The exact check of a put its tally could not clear (a large or deep one): out of line, so
/// the tap's path carries neither its code nor the op it builds.
@inline(never) private func overLimits(_ c: Key, _ k: Key, _ v: Record) throws(OptimistError) {
    try Limits.check([.put(collection: c, key: k, value: v)])
}
