import COptimist
import OptimistModel

// Records given as typed fields (optimist_field, optimist.h) instead of JSON text: the app
// fills an array of structs, so it formats no JSON (and cannot get its escaping wrong), and
// the library parses none.

/// A flat record from `count` fields; a repeated name: the last one wins, as in JSON.
func record(fields: UnsafePointer<optimist_field>?, count: Int) throws(OptimistError) -> Record {
    guard count >= 0 else { throw .misuse("count is too large") }
    guard count == 0 || fields != nil else { throw .misuse("fields is NULL") }
    var r = count <= 6 ? emptySmallRecord : count <= 12 ? emptyRecordWithRoom : Record(minimumCapacity: count)
    for i in 0..<count {
        let f = fields![i]
        let field = try key(f.name, "a field's name")
        switch f.type {
        case OPTIMIST_FIELD_NULL: r[field] = .null
        case OPTIMIST_FIELD_BOOL: r[field] = .bool(f.number != 0)
        case OPTIMIST_FIELD_NUMBER:
            guard f.number.isFinite else { throw .invalid("field \(field): the number is NaN or infinite") }
            r[field] = .number(f.number)
        case OPTIMIST_FIELD_TEXT: r[field] = .string(try text(f.text, "a text field's text"))
        default: throw .misuse("field \(field): unknown type \(f.type)")
        }
    }
    return r
}

@_cdecl("optimist_batch_put_fields")
public func optimist_batch_put_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                      _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        .put(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(fields: fields, count: count))
    }
}

@_cdecl("optimist_batch_patch_fields")
public func optimist_batch_patch_fields(_ b: OpaquePointer?, _ coll: UnsafePointer<CChar>?, _ k: UnsafePointer<CChar>?,
                                        _ fields: UnsafePointer<optimist_field>?, _ count: Int) -> Int32 {
    appendOp(b) { () throws(OptimistError) in
        .patch(collection: try key(coll, "coll"), key: try key(k, "key"), value: try record(fields: fields, count: count))
    }
}
