/// Writes canonical JSON: compact, object members sorted bytewise by name, integral numbers
/// below 2^53 without a fraction, other numbers in Swift's shortest round-trip form.
/// Canonical output lets every host compare results as plain strings.
public enum JSONWriter {
    public static func string(_ value: JSON) -> String {
        var out = [UInt8]()
        out.reserveCapacity(64)
        write(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func string(_ record: Record) -> String {
        bytes(record).withUnsafeBufferPointer(stringFromValidUTF8)
    }

    /// The canonical JSON of `record` as UTF-8 bytes, for callers that copy them out (the C
    /// ABI) and need no `String`.
    package static func bytes(_ record: Record) -> [UInt8] {
        var out = [UInt8]()
        appendObject(record, to: &out, sorted: true)
        return out
    }

    /// Appends the JSON of `record` to `out` (see ``writeObject(_:into:sorted:)``), through a
    /// buffer on the stack (``FixedBytes/append(to:_:unbuffered:)``).
    package static func appendObject(_ record: Record, to out: inout [UInt8], sorted: Bool) {
        FixedBytes.append(to: &out, { writeObject(record, into: &$0, sorted: sorted) },
                          unbuffered: { writeObject(record, into: &$0, sorted: sorted) })
    }

    /// The canonical JSON of `record` as a `malloc`'d NUL-terminated string (the C ABI's
    /// records: the caller frees it), nil when memory ran out.
    package static func cString(_ record: Record) -> UnsafeMutablePointer<CChar>? {
        var out = MallocBytes(capacity: 256)  // most records fit: one allocation, no regrowth
        writeObject(record, into: &out, sorted: true)
        return out.takeCString()
    }

    /// Writes `record` into the caller's buffer of `capacity` bytes, NUL-terminated when it
    /// fits (see ``FixedBytes``); returns the text's length without the NUL, which is at least
    /// `capacity` when it did not fit.
    package static func write(_ record: Record, into buffer: UnsafeMutablePointer<UInt8>?, capacity: Int) -> Int {
        var out = FixedBytes(buffer, capacity: capacity)
        writeObject(record, into: &out, sorted: true)
        return out.finish()
    }

    package static func write(_ value: JSON, into out: inout [UInt8]) { write(value, into: &out, sorted: true) }

    package static func writeObject(_ o: [Key: JSON], into out: inout [UInt8]) {
        writeObject(o, into: &out, sorted: true)
    }

    package static func writeNumber(_ d: Double, into out: inout [UInt8]) { emitNumber(d, into: &out) }

    package static func writeString(_ s: String, into out: inout [UInt8]) { emitString(s, into: &out) }

    /// An object's members in canonical (bytewise) order, or, with `sorted: false`, in the
    /// dictionary's own order: for bytes only the engine reads back (an in-memory store's
    /// records), where sorting the names would be most of the cost of writing a record.
    package static func writeObject<S: JSONByteSink>(_ o: [Key: JSON], into out: inout S, sorted: Bool) {
        out.append(UInt8(ascii: "{"))
        var first = true
        if sorted && o.count > 1 {
            if o.count <= 16 {
                // Records have few members: their positions sorted by name on the stack (an
                // insertion sort), where copying the members into an array to sort them cost an
                // allocation and a retain and release of every value. Each position carries its
                // name's first 16 bytes as two integers (``Key/orderingHead``), read once: they
                // decide the comparisons, and only names that share those bytes are compared
                // whole (comparing the names themselves took a retain and release of each).
                typealias Member = (head: (UInt64, UInt64), index: Dictionary<Key, JSON>.Index)
                withUnsafeTemporaryAllocation(of: Member.self, capacity: o.count) { order in
                    var n = 0
                    var i = o.startIndex
                    let keys = o.keys
                    while i != o.endIndex {
                        order.initializeElement(at: n, to: (keys[i].orderingHead, i))
                        n += 1
                        o.formIndex(after: &i)
                    }
                    for a in 1..<n {
                        let m = order[a]
                        var b = a
                        while b > 0 && precedes(m, order[b - 1], keys) {
                            order[b] = order[b - 1]
                            b -= 1
                        }
                        order[b] = m
                    }
                    for a in 0..<n {
                        if a > 0 { out.append(UInt8(ascii: ",")) }
                        emitString(keys[order[a].index].string, into: &out)
                        out.append(UInt8(ascii: ":"))
                        write(o.values[order[a].index], into: &out, sorted: true)
                    }
                    _ = order.deinitialize()
                }
            } else {
                for (k, v) in o.sorted(by: { $0.key < $1.key }) {
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    emitString(k.string, into: &out)
                    out.append(UInt8(ascii: ":"))
                    write(v, into: &out, sorted: true)
                }
            }
        } else {
            for (k, v) in o {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                emitString(k.string, into: &out)
                out.append(UInt8(ascii: ":"))
                write(v, into: &out, sorted: sorted)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Whether member `x`'s name sorts before `y`'s: by their heads, then, on a tie, whole.
    @inline(__always) private static func precedes(
        _ x: (head: (UInt64, UInt64), index: Dictionary<Key, JSON>.Index),
        _ y: (head: (UInt64, UInt64), index: Dictionary<Key, JSON>.Index),
        _ keys: Dictionary<Key, JSON>.Keys
    ) -> Bool {
        if x.head.0 != y.head.0 { return x.head.0 < y.head.0 }
        if x.head.1 != y.head.1 { return x.head.1 < y.head.1 }
        return keys[x.index] < keys[y.index]
    }

    /// Any value; objects inside it sorted or not as `writeObject` says.
    static func write<S: JSONByteSink>(_ value: JSON, into out: inout S, sorted: Bool) {
        switch value {
        case .null: literal("null", into: &out)
        case .bool(let b): literal(b ? "true" : "false", into: &out)
        case .number(let d): emitNumber(d, into: &out)
        case .string(let s): emitString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, v) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(v, into: &out, sorted: sorted)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o): writeObject(o, into: &out, sorted: sorted)
        }
    }

    @inline(__always) static func literal<S: JSONByteSink>(_ text: StaticString, into out: inout S) {
        text.withUTF8Buffer { out.append(bytes: UnsafeRawBufferPointer($0)) }
    }

    static func emitNumber<S: JSONByteSink>(_ d: Double, into out: inout S) {
        if d.rounded(.towardZero) == d && abs(d) < 9_007_199_254_740_992 {
            writeInteger(Int64(d), into: &out)
        } else {
            var text = d.description
            text.withUTF8 { out.append(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Decimal digits without building a `String` first.
    static func writeInteger<S: JSONByteSink>(_ n: Int64, into out: inout S) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var m = n.magnitude
        if m < 10 { out.append(UInt8(ascii: "0") + UInt8(m)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while m > 0 {
                buf[23 - count] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                count += 1
            }
            out.append(bytes: UnsafeRawBufferPointer(rebasing: buf[(24 - count)...]))
        }
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Whether any of the first `count` bytes of a short string's two words (see
    /// ``SmallString/asciiBits(_:)``) is '"', '\\' or a control character. The bytes after
    /// them (zeros, then the flags byte) are masked off: the test's borrows run only toward
    /// later bytes, so they cannot mark an earlier one.
    @inline(__always) static func shortHasSpecialByte(_ w: (UInt64, UInt64), count: Int) -> Bool {
        @inline(__always) func lanes(_ n: Int) -> UInt64 {
            n >= 8 ? ~0 : n <= 0 ? 0 : (1 &<< UInt64(n &* 8)) &- 1
        }
        return specialBytes(w.0) & lanes(count) != 0 || specialBytes(w.1) & lanes(count &- 8) != 0
    }

    /// Whether `bytes` hold a '"', a '\\' or a control character: eight bytes at a time while
    /// none is special (``hasSpecialByte(_:)``, which also stops at non-ASCII bytes; those are
    /// then looked at one by one).
    @inline(__always) static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let n = bytes.count
        var j = 0
        while j + 8 <= n, !hasSpecialByte(UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)) { j += 8 }
        while j < n {
            let c = base[j]
            if c < 0x20 || c == 0x22 || c == 0x5C { return true }
            j += 1
        }
        return false
    }

    static func emitString<S: JSONByteSink>(_ s: String, into out: inout S) {
        // Most names and many values are short ASCII strings, kept inside the string value
        // itself: their bytes are read from its two words (no `withUTF8`, no closure), tested
        // eight at a time, and copied with their quotes in one append.
        if let (words, count) = SmallString.asciiBits(s), !shortHasSpecialByte(words, count: count) {
            var quoted: (UInt64, UInt64, UInt64) = (0, 0, 0)  // '"', up to 15 bytes, '"'
            withUnsafeMutableBytes(of: &quoted) { buf in
                buf[0] = UInt8(ascii: "\"")
                withUnsafeBytes(of: words) { buf.baseAddress!.advanced(by: 1).copyMemory(from: $0.baseAddress!, byteCount: count) }
                buf[count + 1] = UInt8(ascii: "\"")
                out.append(bytes: UnsafeRawBufferPointer(rebasing: buf[0..<count + 2]))
            }
            return
        }
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Most strings need no escape: copy them whole.
            guard needsEscape(bytes) else {
                out.append(bytes: UnsafeRawBufferPointer(bytes))
                return
            }
            for c in bytes {
                switch c {
                case 0x22: out.append(0x5C); out.append(0x22)
                case 0x5C: out.append(0x5C); out.append(0x5C)
                case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    literal("\\u00", into: &out)
                    out.append(hexDigits[Int(c >> 4)])
                    out.append(hexDigits[Int(c & 15)])
                default: out.append(c)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { JSONWriter.string(self) }
}
