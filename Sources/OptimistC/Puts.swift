import COptimist
import OptimistModel

// One-op mutations: a tap that puts one record needs no batch object. Each is
// optimist_mutate of a batch holding that one put, with the default options, minus the
// batch's allocation and handle checks.

@_cdecl("optimist_put")
public func optimist_put(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                         _ json: UnsafePointer<CChar>?, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { () throws(OptimistError) in try measuredRecord(json, "json") }
}

@_cdecl("optimist_put_fields")
public func optimist_put_fields(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ fields: UnsafePointer<optimist_field>?, _ count: Int,
                                _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { () throws(OptimistError) in
        let (r, bytes) = try record(fields: fields, count: count)
        return (r, 1, bytes)
    }
}

/// Checks the store and the address, then mutates with one put of the record `value` makes
/// (validated in the order the batch adders use: collection, key, record), after the limits
/// (``Limits``) from what validating measured: exactly only when that cannot tell.
private func putOne(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                    _ outID: UnsafeMutablePointer<UInt64>?,
                    _ value: () throws(OptimistError) -> (record: Record, depth: Int, bytes: Int)) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let (c, k, v) = (try name(coll, "coll"), try name(k, "key"), try value())
            var tally = Limits.Tally()
            tally.add(collection: c.bytes, key: k.bytes, depth: v.depth, valueBytes: v.bytes)
            if !tally.isWithin { try Limits.check([.put(collection: c.key, key: k.key, value: v.record)]) }
            outID?.pointee = try s.mutate(checkedPut: c.key, k.key, v.record)
        }
    }
}
