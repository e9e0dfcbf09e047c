import COptimist
import OptimistModel

// Records given as typed fields (optimist_field, optimist.h) instead of JSON text: the app
// fills an array of structs, so it formats no JSON (and cannot get its escaping wrong), and
// the library parses none.

/// A flat record from `count` fields; a repeated name: the last one wins, as in JSON. An upper
/// bound of its canonical text goes to `bytes`, for a `Limits/Tally` (its nesting is level
/// 1): from the byte counts of its names and texts, which validating them measured already.
func record(fields: UnsafePointer<optimist_field>?, count: Int, bytes: inout Int) throws(OptimistError) -> Record {
    guard count >= 0 else { throw .misuse("count is too large") }
    guard count == 0 || fields != nil else { throw .misuse("fields is NULL") }
    var r = count <= 6 ? emptySmallRecord : count <= 12 ? emptyRecordWithRoom : Record(minimumCapacity: count)
    // Per field: the name at 6 bytes per byte with its quotes, colon and comma, and the value
    // (a text the same way; a number, bool or null at most 24 bytes).
    var bound = 2, n = 0
    for i in 0..<count {
        let f = fields![i]
        let field = try key(f.name, "a field's name", count: &n)
        bound &+= 6 &* n &+ 4 &+ Limits.Tally.numberBytes
        switch f.type {
        case OPTIMIST_FIELD_NULL: r[field] = .null
        case OPTIMIST_FIELD_BOOL: r[field] = .bool(f.number != 0)
        case OPTIMIST_FIELD_NUMBER:
            guard f.number.isFinite else { throw .invalid("field \(field): the number is NaN or infinite") }
            r[field] = .number(f.number)
        case OPTIMIST_FIELD_TEXT:
            r[field] = .string(try text(f.text, "a text field's text", count: &n))
            bound &+= 6 &* n &+ 2
        default: throw .misuse("field \(field): unknown type \(f.type)")
        }
    }
    bytes = bound
    return r
}

@_cdecl("optimist_batch_put_fields")
public func optimist_batch_put_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                      _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendRecordOp(b, coll, k, Op.put(collection:key:value:)) { (depth, bytes) throws(OptimistError) in
        depth = 1
        return try record(fields: fields, count: count, bytes: &bytes)
    }
}

@_cdecl("optimist_batch_patch_fields")
public func optimist_batch_patch_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                        _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendRecordOp(b, coll, k, Op.patch(collection:key:value:)) { (depth, bytes) throws(OptimistError) in
        depth = 1
        return try record(fields: fields, count: count, bytes: &bytes)
    }
}
