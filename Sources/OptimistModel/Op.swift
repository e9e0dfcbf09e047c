/// One operation of a mutation. Value type: build arrays of them and hand them to
/// `Store.mutate(_:dedupeKey:policy:)` (in `OptimistCore`).
public enum Op: Sendable, Hashable {
    /// Replace the record.
    case put(collection: Key, key: Key, value: Record)
    /// RFC 7396 merge patch onto the record (a missing record counts as `{}`).
    case patch(collection: Key, key: Key, value: Record)
    /// Remove the record (no error if absent).
    case delete(collection: Key, key: Key)
    /// Add `delta` to a top-level numeric field (a missing record or field counts as 0).
    case incr(collection: Key, key: Key, field: Key, delta: Double)

    // Inlinable: called from the engine's modules, each read took a copy of the whole op
    // (its keys and record retained, then released) to hand back one key.
    @inlinable public var collection: Key {
        switch self {
        case .put(let c, _, _), .patch(let c, _, _), .delete(let c, _), .incr(let c, _, _, _): c
        }
    }

    @inlinable public var key: Key {
        switch self {
        case .put(_, let k, _), .patch(_, let k, _), .delete(_, let k), .incr(_, let k, _, _): k
        }
    }

    /// Whether the op's result is the same whatever the record was (a put or a delete): the
    /// ops before it on the record do not show through it.
    @inlinable package var replacesRecord: Bool {
        switch self {
        case .put, .delete: true
        case .patch, .incr: false
        }
    }

    /// The op applied to the current value of its record (`nil`: absent). Returns `.failure`
    /// when it cannot apply (only `incr` on a non-number, or to a non-finite result, can't).
    public func apply(to current: Record?) -> Result<Record?, OptimistError> {
        switch self {
        case .put(_, _, let v):
            return .success(v)
        case .patch(_, _, let p):
            guard case .object(let o) = JSON.mergePatch(current.map(JSON.object), .object(p)) else {
                return .failure(.internal("merge patch of an object gave a non-object"))
            }
            return .success(o)
        case .delete:
            return .success(nil)
        case .incr(_, let k, let field, let delta):
            var record = current ?? [:]
            let old: Double
            switch record[field] {
            case nil: old = 0
            case .number(let d)?: old = d
            default: return .failure(.invalid("incr of \(k).\(field): the field is not a number"))
            }
            let new = old + delta
            guard new.isFinite else { return .failure(.invalid("incr of \(k).\(field) overflows")) }
            record[field] = .number(new)
            return .success(record)
        }
    }
}

extension Op {
    /// The op as a JSON object, the outbox wire form:
    /// `{"op":"put","coll":C,"key":K,"value":{…}}`, `{"op":"incr",…,"field":F,"delta":D}`.
    public var json: JSON {
        switch self {
        case .put(let c, let k, let v): ["op": "put", "coll": .string(c.string), "key": .string(k.string), "value": .object(v)]
        case .patch(let c, let k, let v): ["op": "patch", "coll": .string(c.string), "key": .string(k.string), "value": .object(v)]
        case .delete(let c, let k): ["op": "delete", "coll": .string(c.string), "key": .string(k.string)]
        case .incr(let c, let k, let f, let d):
            ["op": "incr", "coll": .string(c.string), "key": .string(k.string), "field": .string(f.string), "delta": .number(d)]
        }
    }

    /// Parses the wire form written by ``json``.
    public init(json: JSON) throws(OptimistError) {
        guard case .object(let o) = json, case .string(let op)? = o["op"],
              case .string(let c)? = o["coll"], case .string(let k)? = o["key"] else {
            throw .invalid("an op needs string members op, coll and key")
        }
        switch op {
        case "put", "patch":
            guard case .object(let v)? = o["value"] else { throw .invalid("\(op) needs an object value") }
            self = op == "put" ? .put(collection: Key(c), key: Key(k), value: v) : .patch(collection: Key(c), key: Key(k), value: v)
        case "delete":
            self = .delete(collection: Key(c), key: Key(k))
        case "incr":
            guard case .string(let f)? = o["field"], case .number(let d)? = o["delta"] else {
                throw .invalid("incr needs a string field and a number delta")
            }
            self = .incr(collection: Key(c), key: Key(k), field: Key(f), delta: d)
        default:
            throw .invalid("unknown op \(op)")
        }
    }

    /// A JSON array of ops in wire form.
    public static func encode(_ ops: [Op]) -> String { encodedBytes(ops).withUnsafeBufferPointer(stringFromValidUTF8) }

    /// ``encode(_:)``'s text as UTF-8 bytes, written straight from the ops: the members of
    /// ``json`` in their canonical (sorted) order, without building its objects first (the
    /// sync encodes every mutation it pushes).
    package static func encodedBytes(_ ops: [Op]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32 + ops.count * 160)
        out.append(UInt8(ascii: "["))
        for (n, op) in ops.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            op.writeJSON(into: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// ``json``'s canonical text: members sorted bytewise (`coll` < `delta` < `field` < `key`
    /// < `op` < `value`), as ``JSONWriter`` sorts them.
    private func writeJSON(into out: inout [UInt8]) {
        func member(_ name: StaticString, _ first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            JSONWriter.literal(name, into: &out)
        }
        let c: Key, k: Key, name: StaticString
        switch self {
        case .put(let cc, let kk, _): (c, k, name) = (cc, kk, "\"put\"")
        case .patch(let cc, let kk, _): (c, k, name) = (cc, kk, "\"patch\"")
        case .delete(let cc, let kk): (c, k, name) = (cc, kk, "\"delete\"")
        case .incr(let cc, let kk, _, _): (c, k, name) = (cc, kk, "\"incr\"")
        }
        out.append(UInt8(ascii: "{"))
        member("\"coll\":", true)
        JSONWriter.emitString(c.string, into: &out)
        if case .incr(_, _, let f, let d) = self {
            member("\"delta\":")
            JSONWriter.emitNumber(d, into: &out)
            member("\"field\":")
            JSONWriter.emitString(f.string, into: &out)
        }
        member("\"key\":")
        JSONWriter.emitString(k.string, into: &out)
        member("\"op\":")
        JSONWriter.literal(name, into: &out)
        switch self {
        case .put(_, _, let v), .patch(_, _, let v):
            member("\"value\":")
            JSONWriter.appendObject(v, to: &out, sorted: true)
        case .delete, .incr: break
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Parses a JSON array of ops in wire form.
    public static func decode(_ text: String) throws(OptimistError) -> [Op] {
        let value: JSON
        do { value = try JSONParser.parse(text) } catch { throw .invalid("ops: \(error)") }
        guard case .array(let items) = value else { throw .invalid("ops must be a JSON array") }
        var ops = [Op]()
        ops.reserveCapacity(items.count)
        for item in items { ops.append(try Op(json: item)) }
        return ops
    }
}
