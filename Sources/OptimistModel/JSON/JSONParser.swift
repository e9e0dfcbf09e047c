/// A strict RFC 8259 parser: rejects trailing garbage, invalid UTF-8, lone surrogates,
/// non-finite numbers and nesting deeper than ``JSONParser/maxDepth`` (so hostile input
/// cannot overflow the stack).
public struct JSONParser {
    public static let maxDepth = 256

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: String
        public let offset: Int
        public var description: String { "\(message) at byte \(offset)" }
    }

    /// Parses one JSON document from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSON {
        var p = JSONParser(bytes: bytes)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.i != bytes.count { throw p.fail("unexpected data after the JSON value") }
        return v
    }

    /// Parses one JSON document from a string.
    public static func parse(_ text: String) throws(Failure) -> JSON {
        var s = text
        var result: Result<JSON, Failure> = .failure(Failure(message: "empty", offset: 0))
        s.withUTF8 { buf in
            do throws(Failure) { result = .success(try parse(buf)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Parses a JSON object (a record); anything else is a failure.
    public static func parseObject(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> Record {
        guard case .object(let o) = try parse(bytes) else { throw Failure(message: "expected a JSON object", offset: 0) }
        return o
    }

    /// ``parseObject(_:)-(UnsafeBufferPointer<UInt8>)``, with the deepest nesting inside the
    /// record written to `depth` (the record itself is level 1, as ``Limits/maxDepth`` counts):
    /// what a mutation's maker needs for ``Limits/Tally`` without walking the record again.
    package static func parseObject(_ bytes: UnsafeBufferPointer<UInt8>, depth: inout Int) throws(Failure) -> Record {
        var p = JSONParser(bytes: bytes)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        if p.i != bytes.count { throw p.fail("unexpected data after the JSON value") }
        guard case .object(let o) = v else { throw Failure(message: "expected a JSON object", offset: 0) }
        depth = p.deepest
        return o
    }

    /// Parses the JSON object that starts at byte `start` (no space before it) and nothing
    /// after it: the record, and the offset just past its closing brace. For readers of a
    /// fixed layout with records inside (a store's saved ops), which otherwise scan for the
    /// object's end first and then parse it: two passes over every byte.
    package static func parseObject(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(Failure) -> (record: Record, end: Int) {
        var p = JSONParser(bytes: bytes)
        p.i = start
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{"), case .object(let o) = try p.object(depth: 1) else {
            throw Failure(message: "expected a JSON object", offset: start)
        }
        return (o, p.i)
    }

    public static func parseObject(_ text: String) throws(Failure) -> Record {
        guard case .object(let o) = try parse(text) else { throw Failure(message: "expected a JSON object", offset: 0) }
        return o
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var i = 0
    /// The deepest object or array entered so far (one compare per container).
    var deepest = 0

    func fail(_ m: String) -> Failure { Failure(message: m, offset: i) }

    mutating func skipSpace() {
        while i < bytes.count {
            let c = bytes[i]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { break }
        }
    }

    mutating func value(depth: Int) throws(Failure) -> JSON {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of input") }
        let w = word.utf8Start
        for k in 0..<n where bytes[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    mutating func object(depth: Int) throws(Failure) -> JSON {
        if depth > Self.maxDepth { throw fail("nesting too deep") }
        if depth > deepest { deepest = depth }
        i += 1
        // Built in place, with room for 6 members (see ``emptySmallRecord``; gathering members
        // in an array first and sizing the dictionary exactly cost more: callgrind).
        var members = emptySmallRecord
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") { i += 1; return .object([:]) }
        // Each skipSpace is tried only where the next byte is not the expected one: compact
        // JSON (what programs send) has no whitespace, and four calls a member were work
        // every JSON tap paid for nothing.
        while true {
            if i < bytes.count && bytes[i] != UInt8(ascii: "\"") { skipSpace() }
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let name = try memberName()
            if i < bytes.count && bytes[i] != UInt8(ascii: ":") { skipSpace() }
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            if i < bytes.count && bytes[i] <= 0x20 { skipSpace() }
            members[name] = try value(depth: depth)  // a repeated name: the last one wins
            guard i < bytes.count else { throw fail("unexpected end of input") }
            var c = bytes[i]
            if c <= 0x20 {
                skipSpace()
                guard i < bytes.count else { throw fail("unexpected end of input") }
                c = bytes[i]
            }
            if c == UInt8(ascii: ",") { i += 1; continue }
            if c == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func array(depth: Int) throws(Failure) -> JSON {
        if depth > Self.maxDepth { throw fail("nesting too deep") }
        if depth > deepest { deepest = depth }
        i += 1
        var items = [JSON]()
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    /// A member name (its key's hash taken from the string just built: ``Key/field(_:)``).
    mutating func memberName() throws(Failure) -> Key { Key.field(try string()) }

    /// Scans a string.
    mutating func string() throws(Failure) -> String {
        i += 1
        let start = i
        // Fast path: no escapes; UTF-8 validated only when a byte is not ASCII. A local index
        // and base pointer keep the loops in registers; eight bytes at a time while no byte
        // is special.
        let n = bytes.count
        guard let base = bytes.baseAddress else { throw fail("unterminated string") }
        var j = start
        var high: UInt8 = 0
        while j < n {
            if j &+ 8 <= n {
                // A word with a special byte goes straight to the first one (the lowest flag
                // is exact; see ``specialBytes(_:)``): most strings end in their first word,
                // and stepping to the quote byte by byte cost every JSON tap a step per byte.
                let special = specialBytes(UInt64(littleEndian: UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)))
                if special == 0 { j &+= 8; continue }
                j &+= special.trailingZeroBitCount &>> 3
            }
            let c = base[j]
            if c == 0x22 || c == 0x5C || c < 0x20 { break }
            high |= c  // a byte at 0x80 or above: judged below
            j &+= 1
        }
        i = j
        if j < n && base[j] == 0x22 {
            let slice = UnsafeBufferPointer(start: base + start, count: j - start)
            if high >= 0x80 { guard isValidUTF8(slice) else { throw fail("invalid UTF-8 in string") } }
            i += 1
            return stringFromValidUTF8(slice)
        }
        if j < n && base[j] < 0x20 { throw fail("control character in string") }
        var out = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                let valid = out.withUnsafeBufferPointer(isValidUTF8)
                guard valid else { throw fail("invalid UTF-8 in string") }
                return String(decoding: out, as: UTF8.self)
            }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw fail("lone surrogate")
                }
                guard let u = Unicode.Scalar(scalar) else { throw fail("invalid scalar") }
                out.append(contentsOf: UTF8.encode(u)!)
            default: throw fail("invalid escape")
            }
        }
        throw fail("unterminated string")
    }

    mutating func number() throws(Failure) -> Double {
        // Fast path, one pass: a plain integer of at most 15 digits (counts, flags, times in
        // ms), exact as a Double. Anything else (fractions, exponents, bad input) takes the
        // general path below.
        if let base = bytes.baseAddress {
            let n = bytes.count
            var j = i
            let negative = base[j] == UInt8(ascii: "-")
            if negative { j += 1 }
            let first = j
            var v: Int64 = 0
            while j < n && j - first < 16 {
                let d = base[j] &- UInt8(ascii: "0")
                if d > 9 { break }
                v = v &* 10 &+ Int64(d)
                j += 1
            }
            let digits = j - first
            let next = j < n ? base[j] : 0
            if digits >= 1 && digits <= 15 && (digits == 1 || base[first] != UInt8(ascii: "0"))
                && next != UInt8(ascii: ".") && next != UInt8(ascii: "e") && next != UInt8(ascii: "E") && !isDigit(next) {
                i = j
                return negative ? (v == 0 ? -0.0 : -Double(v)) : Double(v)
            }
        }
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw fail("invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if bytes[i] >= UInt8(ascii: "1") && bytes[i] <= UInt8(ascii: "9") {
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        } else {
            throw fail("invalid number")
        }
        var integral = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            integral = false
            i += 1
            guard i < bytes.count && isDigit(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            integral = false
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            guard i < bytes.count && isDigit(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count && isDigit(bytes[i]) { i += 1 }
        }
        // Short integers are common (counts, flags): skip the general conversion.
        if integral && i - start <= 15 {
            var v: Int64 = 0
            var k = start
            let negative = bytes[k] == UInt8(ascii: "-")
            if negative { k += 1 }
            while k < i { v = v * 10 + Int64(bytes[k] - UInt8(ascii: "0")); k += 1 }
            return negative ? (v == 0 ? -0.0 : -Double(v)) : Double(v)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw fail("number out of range") }
        return d
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

/// Whether any byte of `w` is '"', '\\', below 0x20 or at least 0x80. SWAR: after the XOR a
/// byte is zero exactly where it matched, and subtracting 0x01 (0x20) from each byte sets the
/// top bit of a byte that was zero (below 0x20); bytes at 0x80 and above are caught directly.
@inline(__always) func hasSpecialByte(_ w: UInt64) -> Bool { specialBytes(w) != 0 }

/// The top bit of each byte of `w` that ``hasSpecialByte(_:)`` looks for (and, above the
/// first such byte, possibly of others: a borrow runs on to the later bytes). The lowest bit
/// set is always exact: no borrow reaches it from below, as each byte below matched nothing.
@inline(__always) func specialBytes(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
    let q = w ^ (ones &* 0x22), b = w ^ (ones &* 0x5C)
    let found = ((q &- ones) | (b &- ones) | (w &- ones &* 0x20)) & ~w & highs
    return found | (w & highs)
}

/// A string from bytes known to be valid UTF-8: short ASCII ones built directly
/// (``SmallString``), others without the second validation pass `String(decoding:)` makes.
@inlinable @inline(__always) package func stringFromValidUTF8(_ b: UnsafeBufferPointer<UInt8>) -> String {
    if let s = SmallString.make(b) { return s }
    return largeStringFromValidUTF8(b)
}

/// ``stringFromValidUTF8(_:)``'s path for a string longer than 15 bytes or not ASCII, kept
/// out of line so that the short path inlines where keys and short values are built.
@usableFromInline @inline(never) func largeStringFromValidUTF8(_ b: UnsafeBufferPointer<UInt8>) -> String {
    String(unsafeUninitializedCapacity: b.count) { out in
        if let base = b.baseAddress { out.baseAddress!.update(from: base, count: b.count) }
        return b.count
    }
}

/// Whether every byte of `b` is ASCII: eight at a time, the last word overlapping the one
/// before it (never past `b`), short input in halves. Inlined before ``isValidUTF8(_:)``
/// where most text is ASCII: otherwise the call and its loops are paid for every string of a tap.
@inlinable @inline(__always) package func isASCII(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
    let n = b.count
    guard let base = b.baseAddress, n > 0 else { return true }
    let p = UnsafeRawPointer(base)
    if n >= 8 {
        var high = p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
        var i = 0
        while i &+ 8 < n { high |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self); i &+= 8 }
        return high & 0x8080_8080_8080_8080 == 0
    }
    if n >= 4 {
        let high = p.loadUnaligned(as: UInt32.self) | p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
        return high & 0x8080_8080 == 0
    }
    return (base[0] | base[n &>> 1] | base[n &- 1]) & 0x80 == 0
}

/// Whether `b` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
/// Hand-written because the standard library's validating initializer is generic and slow.
package func isValidUTF8(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    let n = b.count
    // Eight ASCII bytes at a time first: most text an app writes (a note, a name) is ASCII.
    if let base = b.baseAddress {
        while i &+ 8 <= n, UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i &+= 8 }
    }
    while i < n {
        let c = b[i]
        if c < 0x80 { i += 1; continue }
        let need: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch c {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: return false
        }
        guard i + need < n else { return false }
        let second = b[i + 1]
        guard second >= lo && second <= hi else { return false }
        var k = 2
        while k <= need {
            guard b[i + k] & 0xC0 == 0x80 else { return false }
            k += 1
        }
        i += need + 1
    }
    return true
}
