import COptimist
import OptimistModel

// Records given as typed fields (optimist_field, optimist.h) instead of JSON text: the app
// fills an array of structs, so it formats no JSON (and cannot get its escaping wrong), and
// the library parses none.

/// A flat record from `count` fields; a repeated name: the last one wins, as in JSON. With
/// an upper bound of its canonical text for a ``Limits/Tally`` (its nesting is level 1): the
/// byte counts of its names and texts, which validating them measured already.
func record(fields: UnsafePointer<optimist_field>?, count: Int) throws(OptimistError) -> (record: Record, bytes: Int) {
    guard count >= 0 else { throw .misuse("count is too large") }
    guard count == 0 || fields != nil else { throw .misuse("fields is NULL") }
    var r = count <= 6 ? emptySmallRecord : count <= 12 ? emptyRecordWithRoom : Record(minimumCapacity: count)
    // Per field: the name at 6 bytes per byte with its quotes, colon and comma, and the value
    // (a text the same way; a number, bool or null at most 24 bytes).
    var bound = 2
    for i in 0..<count {
        let f = fields![i]
        let (field, nameBytes) = try name(f.name, "a field's name")
        bound &+= 6 &* nameBytes &+ 4 &+ Limits.Tally.numberBytes
        switch f.type {
        case OPTIMIST_FIELD_NULL: r[field] = .null
        case OPTIMIST_FIELD_BOOL: r[field] = .bool(f.number != 0)
        case OPTIMIST_FIELD_NUMBER:
            guard f.number.isFinite else { throw .invalid("field \(field): the number is NaN or infinite") }
            r[field] = .number(f.number)
        case OPTIMIST_FIELD_TEXT:
            let (t, textBytes) = try measuredText(f.text, "a text field's text")
            bound &+= 6 &* textBytes &+ 2
            r[field] = .string(t)
        default: throw .misuse("field \(field): unknown type \(f.type)")
        }
    }
    return (r, bound)
}

@_cdecl("optimist_batch_put_fields")
public func optimist_batch_put_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                      _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let (c, k) = (try name(coll, "coll"), try name(k, "key"))
        let (r, bytes) = try record(fields: fields, count: count)
        return (.put(collection: c.key, key: k.key, value: r), c.bytes, k.bytes, 1, bytes)
    }
}

@_cdecl("optimist_batch_patch_fields")
public func optimist_batch_patch_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                        _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        let (c, k) = (try name(coll, "coll"), try name(k, "key"))
        let (r, bytes) = try record(fields: fields, count: count)
        return (.patch(collection: c.key, key: k.key, value: r), c.bytes, k.bytes, 1, bytes)
    }
}
