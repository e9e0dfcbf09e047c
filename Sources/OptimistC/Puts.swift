import COptimist
import OptimistModel

// One-op mutations: a tap that puts one record needs no batch object. Each is
// optimist_mutate of a batch holding that one put, with the default options, minus the
// batch's allocation and handle checks.

@_cdecl("optimist_put")
public func optimist_put(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                         _ json: UnsafePointer<CChar>?, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { () throws(OptimistError) in try record(json, "json") }
}

@_cdecl("optimist_put_fields")
public func optimist_put_fields(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ fields: UnsafePointer<optimist_field>?, _ count: Int,
                                _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    putOne(handle, coll, k, outID) { () throws(OptimistError) in try record(fields: fields, count: count) }
}

/// Checks the store and the address, then mutates with one put of the record `value` makes
/// (validated in the order the batch adders use: collection, key, record).
private func putOne(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                    _ outID: UnsafeMutablePointer<UInt64>?, _ value: () throws(OptimistError) -> Record) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let (c, k, v) = (try key(coll, "coll"), try key(k, "key"), try value())
            outID?.pointee = try s.mutate(put: c, k, v)
        }
    }
}
