#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import COptimist
import OptimistCore
import OptimistModel

// Subscriptions: C listeners called with an array of `optimist_change`, the struct as
// Include/optimist.h declares it (imported through the COptimist module, so the compiler lays
// it out as C does).

/// A store listener.
private extension CCallback where Fn == optimist_listener {
    /// Builds the C array (strings valid only during the call), calls the listener, frees all.
    func deliver(_ changes: [Change]) {
        let n = changes.count
        guard n > 0 else { return }
        let array = UnsafeMutablePointer<optimist_change>.allocate(capacity: n)
        var strings = [UnsafeMutablePointer<CChar>?]()
        strings.reserveCapacity(n * 3)
        var filled = 0
        defer {
            for p in strings { free(p) }
            array.deinitialize(count: filled)
            array.deallocate()
        }
        for c in changes {
            let coll = strdup(c.collection.string), key = strdup(c.key.string)
            let value = c.value.map { strdup(JSONWriter.string($0)) } ?? nil
            strings.append(coll)
            strings.append(key)
            strings.append(value)
            // Out of memory for a change's strings: skip the whole batch rather than hand the
            // listener NULL where it is promised a string.
            guard coll != nil, key != nil, c.value == nil || value != nil else { return }
            // `pending` carries the record's status (OPTIMIST_RECORD_*): non-zero keeps meaning
            // "not confirmed", as the field did when it was a flag (the layout is unchanged).
            (array + filled).initialize(to: optimist_change(
                collection: UnsafePointer(coll), key: UnsafePointer(key), value_json: UnsafePointer(value),
                pending: c.status.rawValue, cause: c.cause.rawValue))
            filled += 1
        }
        fn(ctx, array, n)
    }
}

@_cdecl("optimist_subscribe")
public func optimist_subscribe(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ pre: UnsafePointer<CChar>?,
                               _ fn: optimist_listener?, _ ctx: UnsafeMutableRawPointer?, _ outSub: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            guard let fn else { throw .misuse("the listener is NULL") }
            let c = try optionalText(coll, "coll").map { Key($0) }
            let p = try optionalText(pre, "prefix").map { Key($0) }
            let out = try out(outSub, "out_sub")
            let box = CCallback(fn, ctx: ctx)
            out.pointee = try s.subscribe(collection: c, prefix: p) { box.deliver($0) }
        }
    }
}

@_cdecl("optimist_unsubscribe")
public func optimist_unsubscribe(_ handle: OpaquePointer?, _ sub: UInt64) -> Int32 {
    guarded { () throws(OptimistError) in try withStore(handle) { s throws(OptimistError) in try s.unsubscribe(sub) } }
}
