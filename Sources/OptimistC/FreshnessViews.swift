import OptimistCore
import OptimistModel

// Freshness of loaded key ranges, and incrementally maintained views.

@_cdecl("optimist_mark_loaded")
public func optimist_mark_loaded(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ from: UnsafePointer<CChar>?,
                                 _ to: UnsafePointer<CChar>?, _ at: Int64) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            try s.markLoaded(try key(coll, "coll"), from: try key(from, "from_key"), to: try key(to, "to_key"), at: at)
        }
    }
}

@_cdecl("optimist_needs_reload")
public func optimist_needs_reload(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                  _ now: Int64, _ maxAge: Int64, _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), k = try key(k, "key")
            let out = try out(outFlag, "out")
            out.pointee = try s.needsReload(c, k, now: now, maxAge: maxAge) ? 1 : 0
        }
    }
}

/// `kind` is "count" or "sum:<field>"; anything else is MISUSE. `prefix` NULL means "".
@_cdecl("optimist_view_define")
public func optimist_view_define(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ coll: UnsafePointer<CChar>?,
                                 _ pre: UnsafePointer<CChar>?, _ kind: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let n = try text(name, "name"), c = try key(coll, "coll"), p = try prefix(pre, "prefix")
            let k = try ViewKind(parsing: try text(kind, "kind"))
            try s.defineView(n, collection: c, prefix: p, kind: k)
        }
    }
}

@_cdecl("optimist_view_get")
public func optimist_view_get(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ outValue: UnsafeMutablePointer<Double>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let n = try key(name, "name")
            let out = try out(outValue, "out")
            out.pointee = try s.viewValue(n)
        }
    }
}
