import OptimistCore
import OptimistModel

/// Decodes a mutation's stored ops.
///
/// The store writes them packed (``PackedOps``, layout version 5 on). Rows written before hold
/// ``Op/encode(_:)``'s text: JSON whose layout was fixed, an array of objects with members in
/// byte order (`coll`, `delta`, `field`, `key`, `op`, `value`). That exact layout is read
/// directly (only a record value goes through the JSON parser, where it stands), skipping the
/// dictionary the generic parser would build for each op. Anything else (escapes in a name,
/// another member order, a damaged row) takes the generic path, which also reports errors.
///
/// The command-line tool decodes the ops it shows with ``decode(_:)`` too, and words a
/// ``Fault`` its own way.
package enum StoredOps {
    /// Why stored ops do not decode.
    package enum Fault: Error {
        /// Packed bytes that do not decode.
        case packed(PackedOps.Damage)
        /// Text that is not JSON.
        case notJSON(JSONParser.Failure)
        /// JSON that is not an array.
        case notAList
        /// An empty array: a mutation has an op at least.
        case empty
        /// An item that is not an op.
        case op(OptimistError)

        /// What the library says (`CORRUPT`) when it reads such a row.
        func message(mutation id: MutationID) -> String {
            switch self {
            case .packed(let damage): "mutation \(id): packed ops: \(damage)"
            case .notJSON(let failure): "mutation \(id): ops are not JSON: \(failure)"
            case .notAList, .empty: "mutation \(id): ops are not a list"
            case .op(let error): "mutation \(id): \(error)"
            }
        }
    }

    static func decode(_ b: UnsafeBufferPointer<UInt8>, id: MutationID) throws(OptimistError) -> [Op] {
        do { return try decode(b) } catch { throw .corrupt(error.message(mutation: id)) }
    }

    /// The ops stored in `b` (a row's `ops` column), never empty.
    package static func decode(_ b: UnsafeBufferPointer<UInt8>) throws(Fault) -> [Op] {
        if PackedOps.isPacked(b) {
            do { return try PackedOps.decode(b) } catch { throw .packed(error) }
        }
        var scanner = Scanner(bytes: b)
        if let ops = scanner.ops(), !ops.isEmpty { return ops }
        return try generic(b)
    }

    static func generic(_ b: UnsafeBufferPointer<UInt8>) throws(Fault) -> [Op] {
        let value: JSON
        do { value = try JSONParser.parse(b) } catch { throw .notJSON(error) }
        guard case .array(let items) = value else { throw .notAList }
        guard !items.isEmpty else { throw .empty }
        var ops = [Op]()
        ops.reserveCapacity(items.count)
        for item in items {
            do { ops.append(try Op(json: item)) } catch { throw .op(error) }
        }
        return ops
    }

    /// The fast path: returns nil as soon as the text is not exactly what `Op.encode` writes.
    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func eat(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }

        /// `"name":`
        mutating func member(_ name: StaticString) -> Bool {
            let n = name.utf8CodeUnitCount
            guard i + n + 3 <= bytes.count, bytes[i] == 0x22, bytes[i + n + 1] == 0x22, bytes[i + n + 2] == 0x3A else { return false }
            let p = name.utf8Start
            for k in 0..<n where bytes[i + 1 + k] != p[k] { return false }
            i += n + 3
            return true
        }

        /// A string without escapes (valid UTF-8), or nil.
        mutating func string() -> String? {
            guard eat(0x22) else { return nil }
            let start = i
            var ascii = true
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x22 { break }
                if c == 0x5C || c < 0x20 { return nil }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            guard i < bytes.count else { return nil }
            let text = UnsafeBufferPointer(rebasing: bytes[start..<i])
            i += 1
            // ASCII is valid UTF-8 as it is; anything else is checked (a damaged row fails).
            return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
        }

        mutating func number() -> Double? {
            let start = i
            while i < bytes.count, case let c = bytes[i],
                  c == 0x2D || c == 0x2B || c == 0x2E || c == 0x65 || c == 0x45 || (c >= 0x30 && c <= 0x39) {
                i += 1
            }
            guard i > start, let d = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)),
                  d.isFinite else { return nil }
            return d
        }

        /// A JSON object (a record), parsed where it stands.
        mutating func object() -> Record? {
            guard let (record, end) = try? JSONParser.parseObject(bytes, at: i) else { return nil }
            i = end
            return record
        }

        mutating func op() -> Op? {
            guard eat(0x7B), member("coll"), let c = string(), eat(0x2C) else { return nil }
            var delta: Double?, field: String?
            if member("delta") {
                guard let d = number(), eat(0x2C), member("field"), let f = string(), eat(0x2C) else { return nil }
                delta = d
                field = f
            }
            guard member("key"), let k = string(), eat(0x2C), member("op"), let kind = string() else { return nil }
            let coll = Key(c), key = Key(k)
            let op: Op
            switch kind {
            case "put", "patch":
                guard delta == nil, eat(0x2C), member("value"), let v = object() else { return nil }
                op = kind == "put" ? .put(collection: coll, key: key, value: v) : .patch(collection: coll, key: key, value: v)
            case "delete":
                guard delta == nil else { return nil }
                op = .delete(collection: coll, key: key)
            case "incr":
                guard let delta, let field else { return nil }
                op = .incr(collection: coll, key: key, field: Key(field), delta: delta)
            default:
                return nil
            }
            return eat(0x7D) ? op : nil
        }

        mutating func ops() -> [Op]? {
            guard eat(0x5B) else { return nil }
            var ops = [Op]()
            while true {
                guard let op = op() else { return nil }
                ops.append(op)
                if eat(0x2C) { continue }
                guard eat(0x5D), i == bytes.count else { return nil }
                return ops
            }
        }
    }
}
