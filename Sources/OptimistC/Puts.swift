import COptimist
import Optimist

// One-op mutations: a tap that puts one record needs no batch object. Each is
// optimist_mutate of a batch holding that one put, with the default options, minus the
// batch's allocation and handle checks.

@_cdecl("optimist_put")
public func optimist_put(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                         _ json: UnsafePointer<CChar>?, _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let op = Op.put(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(json, "json"))
        let id = try s.mutate([op])
        outID?.pointee = id
    }
}

@_cdecl("optimist_put_fields")
public func optimist_put_fields(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ fields: UnsafePointer<optimist_field>?, _ count: Int,
                                _ outID: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        let op = Op.put(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(fields: fields, count: count))
        let id = try s.mutate([op])
        outID?.pointee = id
    }
}
