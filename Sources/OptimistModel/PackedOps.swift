/// The packed form of a mutation's ops: how a store file keeps a pending mutation's ops since
/// layout version 5 (a BLOB in the `mutations.ops` column). Rows written before keep their
/// JSON text, which still loads: the first byte tells the forms apart (``mark``; JSON text
/// starts with `[`).
///
/// Why not JSON text: the store file's writer thread saves every pending mutation, and writing
/// its ops as JSON (escapes checked byte by byte, numbers formatted as decimals) was a large
/// share of the writer's work per mutation, enough to leave it behind a thread making taps.
/// Only this library reads the column back; the `optimist` CLI shows the ops decoded. Records
/// stay JSON.
///
/// Layout (`n` is an unsigned LEB128 varint; `f64` a number's 8 IEEE 754 bytes, little-endian):
///
///     ops     = 0xB1, n(op count), op...
///     op      = kind, string(collection), string(key), then
///               put (0), patch (1): n(member count), member...
///               delete (2):         nothing
///               incr (3):           string(field), f64(delta)
///     member  = string(name), value
///     value   = 0 null | 1 false | 2 true | 3 f64 | 4 string
///             | 5 n(count) value... (an array) | 6 n(count) member... (an object)
///     string  = n(byte count), UTF-8 bytes
///
/// Decoding checks what parsing JSON text checks: lengths within the bytes, valid UTF-8,
/// finite numbers, nesting no deeper than ``JSONParser/maxDepth``, at least one op and nothing
/// after the last. Damaged bytes throw ``Damage``, never trap.
package enum PackedOps {
    /// The first byte of the packed form: never the first byte of UTF-8 text.
    package static let mark: UInt8 = 0xB1

    /// Why bytes are not packed ops.
    package struct Damage: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Encoding

    /// Appends the packed `ops` to `out`, through a buffer on the stack as ``JSONWriter``
    /// appends a record (``FixedBytes/append(to:_:unbuffered:)``).
    package static func append(_ ops: [Op], to out: inout [UInt8]) {
        FixedBytes.append(to: &out, { write(ops, into: &$0) }, unbuffered: { write(ops, into: &$0) })
    }

    /// The packed `ops` as bytes of their own.
    package static func bytes(_ ops: [Op]) -> [UInt8] {
        var out = [UInt8]()
        append(ops, to: &out)
        return out
    }

    static func write<S: JSONByteSink>(_ ops: [Op], into out: inout S) {
        out.append(mark)
        varint(ops.count, into: &out)
        for op in ops {
            switch op {
            case .put(let c, let k, let v), .patch(let c, let k, let v):
                if case .put = op { out.append(0) } else { out.append(1) }
                string(c.string, into: &out)
                string(k.string, into: &out)
                object(v, into: &out)
            case .delete(let c, let k):
                out.append(2)
                string(c.string, into: &out)
                string(k.string, into: &out)
            case .incr(let c, let k, let f, let d):
                out.append(3)
                string(c.string, into: &out)
                string(k.string, into: &out)
                string(f.string, into: &out)
                number(d, into: &out)
            }
        }
    }

    private static func object<S: JSONByteSink>(_ o: Record, into out: inout S) {
        varint(o.count, into: &out)
        for (name, value) in o {
            string(name.string, into: &out)
            write(value, into: &out)
        }
    }

    private static func write<S: JSONByteSink>(_ value: JSON, into out: inout S) {
        switch value {
        case .null: out.append(0)
        case .bool(let b): out.append(b ? 2 : 1)
        case .number(let d):
            out.append(3)
            number(d, into: &out)
        case .string(let s):
            out.append(4)
            string(s, into: &out)
        case .array(let items):
            out.append(5)
            varint(items.count, into: &out)
            for item in items { write(item, into: &out) }
        case .object(let o):
            out.append(6)
            object(o, into: &out)
        }
    }

    @inline(__always) private static func varint<S: JSONByteSink>(_ n: Int, into out: inout S) {
        var m = UInt(n)
        while m >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: m) | 0x80)
            m >>= 7
        }
        out.append(UInt8(m))
    }

    @inline(__always) private static func number<S: JSONByteSink>(_ d: Double, into out: inout S) {
        withUnsafeBytes(of: d.bitPattern.littleEndian) { out.append(bytes: $0) }
    }

    @inline(__always) private static func string<S: JSONByteSink>(_ s: String, into out: inout S) {
        // Names and short values are mostly short ASCII strings kept inside the string value
        // itself: their bytes are copied from its two words (no `withUTF8` and its closure).
        if let (words, count) = SmallString.asciiBits(s) {
            out.append(UInt8(count))
            withUnsafeBytes(of: words) { out.append(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            return
        }
        var s = s
        s.withUTF8 { bytes in
            varint(bytes.count, into: &out)
            out.append(bytes: UnsafeRawBufferPointer(bytes))
        }
    }

    // MARK: Decoding

    /// Whether `bytes` hold the packed form (rather than JSON text): their first byte.
    package static func isPacked(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.isEmpty && bytes[0] == mark
    }

    /// The ops packed in `bytes`, all of them checked (see the type's comment).
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(Damage) -> [Op] {
        var r = Reader(bytes: bytes)
        guard try r.byte() == mark else { throw Damage("not packed ops") }
        let n = try r.count()
        guard n > 0 else { throw Damage("no ops") }
        var ops = [Op]()
        ops.reserveCapacity(n)
        for _ in 0..<n {
            let kind = try r.byte()
            let c = Key(try r.string()), k = Key(try r.string())
            switch kind {
            case 0: ops.append(.put(collection: c, key: k, value: try r.object(depth: 1)))
            case 1: ops.append(.patch(collection: c, key: k, value: try r.object(depth: 1)))
            case 2: ops.append(.delete(collection: c, key: k))
            case 3: ops.append(.incr(collection: c, key: k, field: Key(try r.string()), delta: try r.number()))
            default: throw Damage("unknown op kind \(kind)")
            }
        }
        guard r.atEnd else { throw Damage("bytes after the last op") }
        return ops
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        var atEnd: Bool { i == bytes.count }

        mutating func byte() throws(Damage) -> UInt8 {
            guard i < bytes.count else { throw Damage("the bytes end early") }
            defer { i += 1 }
            return bytes[i]
        }

        /// A varint that counts bytes or items still to come: each takes a byte at least, so
        /// a count above the bytes left is damage (and never sizes an allocation).
        mutating func count() throws(Damage) -> Int {
            var n: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let c = try byte()
                n |= UInt64(c & 0x7F) << shift
                if c < 0x80 { break }
                shift += 7
                guard shift < 63 else { throw Damage("a count is too long") }
            }
            guard n <= UInt64(bytes.count - i) else { throw Damage("a count runs past the end") }
            return Int(n)
        }

        mutating func string() throws(Damage) -> String {
            let n = try count()
            let text = UnsafeBufferPointer(rebasing: bytes[i..<(i + n)])
            i += n
            // The JSON parser's checks and construction: the same UTF-8 rules, and short ASCII
            // strings built straight from their bytes.
            guard isValidUTF8(text) else { throw Damage("a string is not UTF-8") }
            return stringFromValidUTF8(text)
        }

        mutating func number() throws(Damage) -> Double {
            guard bytes.count - i >= 8 else { throw Damage("the bytes end early") }
            let bits = UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)
            i += 8
            let d = Double(bitPattern: UInt64(littleEndian: bits))
            guard d.isFinite else { throw Damage("a number is not finite") }
            return d
        }

        mutating func object(depth: Int) throws(Damage) -> Record {
            guard depth <= JSONParser.maxDepth else { throw Damage("nesting too deep") }
            let n = try count()
            var o = Record(minimumCapacity: n)
            for _ in 0..<n {
                let name = Key(try string())
                o[name] = try value(depth: depth)  // a repeated name: the last one wins, as in JSON
            }
            return o
        }

        mutating func value(depth: Int) throws(Damage) -> JSON {
            switch try byte() {
            case 0: return .null
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3: return .number(try number())
            case 4: return .string(try string())
            case 5:
                guard depth + 1 <= JSONParser.maxDepth else { throw Damage("nesting too deep") }
                let n = try count()
                var items = [JSON]()
                items.reserveCapacity(n)
                for _ in 0..<n { items.append(try value(depth: depth + 1)) }
                return .array(items)
            case 6: return .object(try object(depth: depth + 1))
            case let tag: throw Damage("unknown value tag \(tag)")
            }
        }
    }
}
