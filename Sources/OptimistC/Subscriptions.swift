#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Optimist

// Subscriptions: C listeners called with an array of `optimist_change`.
//
// `optimist_change` is declared in Include/optimist.h, but this target has no C module to
// import it from (adding one means a Package.swift change), so the array is built in raw
// memory with the C layout written out by hand:
//
//     struct optimist_change {            offset (LP64)  offset (ILP32)
//         const char *collection;               0              0
//         const char *key;                      8              4
//         const char *value_json;              16              8
//         int pending;                         24             12   (the record status)
//         int cause;                           28             16
//     };                                  size 32        size 20
//
// Every C ABI we target aligns pointers to their size and `int` to 4 with no other padding,
// which gives the offsets above. Tests/C/smoke_cabi.c checks them with offsetof/sizeof, and
// its listener reads every field, so a mismatch fails the build or the test.
enum ChangeLayout {
    static let pointer = MemoryLayout<UnsafeRawPointer>.size
    static let collection = 0
    static let key = pointer
    static let value = 2 * pointer
    static let pending = 3 * pointer
    static let cause = 3 * pointer + 4
    /// sizeof(optimist_change): the fields rounded up to the struct's alignment (a pointer's).
    static let stride = (3 * pointer + 8 + pointer - 1) / pointer * pointer
    static let alignment = max(pointer, 4)
}

/// `void (*)(void *ctx, const optimist_change *changes, size_t n)`
public typealias CListener = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> Void

/// The C listener and its context. The context is the caller's: we only hand it back, so
/// sending it across threads is the caller's contract (documented in the header).
private final class CListenerBox: @unchecked Sendable {
    let fn: CListener
    let ctx: UnsafeMutableRawPointer?
    init(fn: @escaping CListener, ctx: UnsafeMutableRawPointer?) {
        self.fn = fn
        self.ctx = ctx
    }

    /// Builds the C array (strings valid only during the call), calls the listener, frees all.
    func deliver(_ changes: [Change]) {
        let n = changes.count
        guard n > 0 else { return }
        let array = UnsafeMutableRawPointer.allocate(byteCount: n * ChangeLayout.stride, alignment: ChangeLayout.alignment)
        array.initializeMemory(as: UInt8.self, repeating: 0, count: n * ChangeLayout.stride)
        var strings = [UnsafeMutablePointer<CChar>?]()
        strings.reserveCapacity(n * 3)
        defer {
            for p in strings { free(p) }
            array.deallocate()
        }
        for (i, c) in changes.enumerated() {
            let base = array + i * ChangeLayout.stride
            let coll = strdup(c.collection.string), key = strdup(c.key.string)
            let value = c.value.map { strdup(JSONWriter.string($0)) } ?? nil
            strings.append(coll)
            strings.append(key)
            strings.append(value)
            // Out of memory for a change's strings: skip the whole batch rather than hand the
            // listener NULL where it is promised a string.
            guard coll != nil, key != nil, c.value == nil || value != nil else { return }
            base.storeBytes(of: UnsafeRawPointer(coll), toByteOffset: ChangeLayout.collection, as: UnsafeRawPointer?.self)
            base.storeBytes(of: UnsafeRawPointer(key), toByteOffset: ChangeLayout.key, as: UnsafeRawPointer?.self)
            base.storeBytes(of: UnsafeRawPointer(value), toByteOffset: ChangeLayout.value, as: UnsafeRawPointer?.self)
            // The record's status (0 confirmed, 1 pending, 2 failed): non-zero keeps meaning "not
            // confirmed", as the field did when it was a flag (the struct's layout is unchanged).
            base.storeBytes(of: c.status.rawValue, toByteOffset: ChangeLayout.pending, as: Int32.self)
            base.storeBytes(of: c.cause.rawValue, toByteOffset: ChangeLayout.cause, as: Int32.self)
        }
        fn(ctx, UnsafeRawPointer(array), n)
    }
}

@_cdecl("optimist_subscribe")
public func optimist_subscribe(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ pre: UnsafePointer<CChar>?,
                               _ fn: CListener?, _ ctx: UnsafeMutableRawPointer?, _ outSub: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let s = try store(handle)
        guard let fn else { throw .misuse("the listener is NULL") }
        let c = try optionalText(coll, "coll").map { Key($0) }
        let p = try optionalText(pre, "prefix").map { Key($0) }
        let out = try out(outSub, "out_sub")
        let box = CListenerBox(fn: fn, ctx: ctx)
        out.pointee = try s.subscribe(collection: c, prefix: p) { box.deliver($0) }
    }
}

@_cdecl("optimist_unsubscribe")
public func optimist_unsubscribe(_ handle: OpaquePointer?, _ sub: UInt64) -> Int32 {
    guarded { () throws(OptimistError) in try store(handle).unsubscribe(sub) }
}
