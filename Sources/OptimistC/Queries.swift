#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import COptimist
import OptimistCore
import OptimistModel

// Live queries (Include/optimist.h, "LIVE QUERIES"): the spec and the rows travel as JSON text,
// the same text every host uses.

@_cdecl("optimist_query_open")
public func optimist_query_open(_ handle: OpaquePointer?, _ spec: UnsafePointer<CChar>?,
                                _ outQuery: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let text = try text(spec, "spec_json")
            let out = try out(outQuery, "out")
            out.pointee = makeQueryHandle(try s.query(json: text))
        }
    }
}

@_cdecl("optimist_query_count")
public func optimist_query_count(_ q: OpaquePointer?, _ outCount: UnsafeMutablePointer<Int>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let query = try liveQuery(q)
        let out = try out(outCount, "out")
        out.pointee = try query.count()
    }
}

/// `offset` and `limit` are `size_t` (imported as `Int`): a value above `Int.max` arrives
/// negative and is refused as such.
@_cdecl("optimist_query_rows")
public func optimist_query_rows(_ q: OpaquePointer?, _ offset: Int, _ limit: Int,
                                _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let query = try liveQuery(q)
        let out = try out(outJSON, "out_json")
        guard offset >= 0, limit >= 0 else { throw .misuse("offset or limit is too large") }
        let rows = try query.rows(offset: offset, limit: limit)
        out.pointee = try mallocString(QueryRow.jsonBytes(rows))
    }
}

/// `bytes` as a `malloc`'d NUL-terminated string (a ``MallocBytes`` buffer, as the other JSON
/// the ABI hands out), for the caller to free with optimist_free.
private func mallocString(_ bytes: [UInt8]) throws(OptimistError) -> UnsafeMutablePointer<CChar> {
    var out = MallocBytes(capacity: bytes.count)
    bytes.withUnsafeBytes { out.append(bytes: $0) }
    guard let p = out.takeCString() else { throw .internal("out of memory") }
    return p
}

/// A query listener.
private extension CCallback where Fn == optimist_query_listener {
    func deliver(_ deltas: [QueryDelta]) {
        withDeltasText(deltas) { fn(ctx, $0, deltas.count) }
    }
}

/// Calls `body` with the deltas as one JSON array, NUL-terminated, valid during the call; not
/// at all when there are none.
private func withDeltasText(_ deltas: [QueryDelta], _ body: (UnsafePointer<CChar>) -> Void) {
    guard !deltas.isEmpty else { return }
    var text = QueryDelta.jsonBytes(deltas)
    text.append(0)
    text.withUnsafeBufferPointer { bytes in
        bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { body($0) }
    }
}

@_cdecl("optimist_query_subscribe")
public func optimist_query_subscribe(_ q: OpaquePointer?, _ fn: optimist_query_listener?, _ ctx: UnsafeMutableRawPointer?,
                                     _ outSub: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let query = try liveQuery(q)
        guard let fn else { throw .misuse("the listener is NULL") }
        let out = try out(outSub, "out_sub")
        let box = CCallback(fn, ctx: ctx)
        out.pointee = try query.subscribe { box.deliver($0) }
    }
}

/// A numbered query listener.
private extension CCallback where Fn == optimist_query_numbered_listener {
    func deliver(_ number: UInt64, _ deltas: [QueryDelta]) {
        withDeltasText(deltas) { fn(ctx, number, $0, deltas.count) }
    }
}

/// With `out_rows_json`, the rows and the subscription are made in one step (no call falls
/// between them); `out_delivered` then numbers the last delivery the rows include, else the
/// last one before the subscription.
@_cdecl("optimist_query_subscribe_numbered")
public func optimist_query_subscribe_numbered(_ q: OpaquePointer?, _ fn: optimist_query_numbered_listener?,
                                              _ ctx: UnsafeMutableRawPointer?, _ outSub: UnsafeMutablePointer<UInt64>?,
                                              _ outRowsJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                              _ outDelivered: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guarded { () throws(OptimistError) in
        let query = try liveQuery(q)
        guard let fn else { throw .misuse("the listener is NULL") }
        let out = try out(outSub, "out_sub")
        let box = CCallback(fn, ctx: ctx)
        if let outRowsJSON {
            // Out of memory for the text: the subscription is ended again, so a failure
            // leaves none behind.
            let r = try query.rowsAndSubscribeNumbered { box.deliver($0, $1) }
            let text: UnsafeMutablePointer<CChar>
            do throws(OptimistError) { text = try mallocString(QueryRow.jsonBytes(r.rows)) } catch {
                try? query.unsubscribe(r.subscription)
                throw error
            }
            outRowsJSON.pointee = text
            out.pointee = r.subscription
            outDelivered?.pointee = r.delivered
        } else {
            let r = try query.subscribeNumberedAfter { box.deliver($0, $1) }
            out.pointee = r.subscription
            outDelivered?.pointee = r.delivered
        }
    }
}

@_cdecl("optimist_query_unsubscribe")
public func optimist_query_unsubscribe(_ q: OpaquePointer?, _ sub: UInt64) -> Int32 {
    guarded { () throws(OptimistError) in try liveQuery(q).unsubscribe(sub) }
}

@_cdecl("optimist_query_close")
public func optimist_query_close(_ q: OpaquePointer?) -> Int32 {
    guarded { () throws(OptimistError) in
        guard let q else { return }
        try closeQueryHandle(q)
    }
}

@_cdecl("optimist_index_define")
public func optimist_index_define(_ handle: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ field: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(OptimistError) in
        try withStore(handle) { s throws(OptimistError) in
            let c = try key(coll, "coll")
            let f = try text(field, "field")
            // As a spec writes a path: dotted, or a JSON array of names.
            let json: JSON
            if f.utf8.first == UInt8(ascii: "[") {
                do { json = try JSONParser.parse(f) } catch { throw .invalid("field: not a JSON array of names: \(error)") }
            } else {
                json = .string(f)
            }
            try s.defineIndex(collection: c, field: try FieldPath(parsing: json))
        }
    }
}
