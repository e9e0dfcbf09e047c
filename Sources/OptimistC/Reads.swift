import OptimistModel

// Reads of the visible (or confirmed) state, and of mutations.

@_cdecl("optimist_get")
public func optimist_get(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                         _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    getRecord(handle, coll, k, outJSON, confirmed: false)
}

@_cdecl("optimist_get_confirmed")
public func optimist_get_confirmed(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                   _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    getRecord(handle, coll, k, outJSON, confirmed: true)
}

private func getRecord(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                       _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, confirmed: Bool) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), k = try key(k, "key")
            let out = try out(outJSON, "out_json")
            let r = confirmed ? try s.confirmed(c, k) : try s.get(c, k)
            guard let r else { throw .notFound("no record \(k) in \(c)") }
            guard let text = JSONWriter.cString(r) else { throw .internal("out of memory") }
            out.pointee = text
        }
    }
}

@_cdecl("optimist_get_into")
public func optimist_get_into(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                              _ buf: UnsafeMutablePointer<CChar>?, _ cap: Int, _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    getRecordInto(handle, coll, k, buf, cap, outLen, confirmed: false)
}

@_cdecl("optimist_get_confirmed_into")
public func optimist_get_confirmed_into(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                        _ buf: UnsafeMutablePointer<CChar>?, _ cap: Int, _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    getRecordInto(handle, coll, k, buf, cap, outLen, confirmed: true)
}

/// `cap` is a `size_t` (imported as `Int`: a value above `Int.max` arrives negative and counts
/// as no room, which only means the caller is asked again with the length).
private func getRecordInto(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                           _ buf: UnsafeMutablePointer<CChar>?, _ cap: Int, _ outLen: UnsafeMutablePointer<Int>?,
                           confirmed: Bool) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), k = try key(k, "key")
            let out = try out(outLen, "out_len")
            guard buf != nil || cap == 0 else { throw .misuse("buf is NULL but cap is \(cap)") }
            let r = confirmed ? try s.confirmed(c, k) : try s.get(c, k)
            guard let r else { throw .notFound("no record \(k) in \(c)") }
            out.pointee = JSONWriter.write(r, into: UnsafeMutableRawPointer(buf)?.assumingMemoryBound(to: UInt8.self), capacity: max(cap, 0))
        }
    }
}

@_cdecl("optimist_is_pending")
public func optimist_is_pending(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                _ outFlag: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), k = try key(k, "key")
            let out = try out(outFlag, "out")
            out.pointee = try s.isPending(c, k) ? 1 : 0
        }
    }
}

/// A JSON array of `[key, record]` pairs in key order; `limit` 0 means all (sizes beyond
/// `Int.max` are clamped, which also means all).
@_cdecl("optimist_scan")
public func optimist_scan(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ pre: UnsafePointer<CChar>?,
                          _ limit: UInt, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll"), p = try prefix(pre, "prefix")
            let out = try out(outJSON, "out_json")
            let rows = try s.scan(c, prefix: p, limit: Int(clamping: limit))
            var bytes = [UInt8]()
            bytes.reserveCapacity(16 + rows.count * 48)
            bytes.append(UInt8(ascii: "["))
            for (n, row) in rows.enumerated() {
                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(UInt8(ascii: "["))
                JSONWriter.writeString(row.key.string, into: &bytes)
                bytes.append(UInt8(ascii: ","))
                JSONWriter.writeObject(row.value, into: &bytes)
                bytes.append(UInt8(ascii: "]"))
            }
            bytes.append(UInt8(ascii: "]"))
            out.pointee = try handOut(String(decoding: bytes, as: UTF8.self))
        }
    }
}

@_cdecl("optimist_status")
public func optimist_status(_ handle: OpaquePointer?, _ id: UInt64, _ outStatus: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outStatus, "out_status")
            out.pointee = try s.status(id).rawValue
        }
    }
}

@_cdecl("optimist_pending_count")
public func optimist_pending_count(_ handle: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let out = try out(outCount, "out")
            out.pointee = UInt64(clamping: try s.pendingCount())
        }
    }
}
