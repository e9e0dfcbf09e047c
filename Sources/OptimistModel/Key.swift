/// A collection name, record key or field name, compared byte by byte as UTF-8.
///
/// Swift's `String` equality folds canonically equivalent strings ("é" and "e\u{301}") together;
/// keys must not, and must sort bytewise so ISO dates and zero-padded numbers sort naturally.
public struct Key: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let string: String
    /// A hash of the bytes (``hash(_:)``), computed once: a key is hashed several times per
    /// mutation, and hashing a short cached integer is several times cheaper than hashing the
    /// bytes again.
    @usableFromInline package let bytesHash: UInt64

    @inlinable public init(_ string: String) {
        var s = string
        let h = s.withUTF8 { Key.hash($0) }
        self.string = s
        self.bytesHash = h
    }

    /// A key whose byte hash (``hash(_:)``) the caller computed (the JSON parser, the C
    /// boundary, a coding key's name from its words).
    @inlinable package init(_ string: String, bytesHash: UInt64) {
        self.string = string
        self.bytesHash = bytesHash
    }

    /// The hash of a key's bytes: SipHash-1-3 under a key drawn at random once per process
    /// (``hashState``). Keys and member names come from input (a push, a pull reply, a file):
    /// with an unkeyed hash, names chosen to share one hash make every table they key
    /// quadratic; under a secret key nobody can choose them. Eight bytes a step, the last 0 to
    /// 7 zero-padded with the count in the top byte; a short string's two words, zero past
    /// its count, are those words already (``hash(words:count:)``). Dictionaries mix it again
    /// with their seed (``_rawHashValue(seed:)``); equal hashes are confirmed byte by byte.
    @inlinable @inline(__always) package static func hash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let n = b.count
        var v = hashState
        guard let base = b.baseAddress, n > 0 else { return finish(&v, 0) }
        let p = UnsafeRawPointer(base)
        var i = 0
        while i &+ 8 <= n {
            compress(&v, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i &+= 8
        }
        let last = i < n ? SmallString.lowBytes(p, from: i, to: n) : 0  // the last 0 to 7 bytes
        return finish(&v, last | UInt64(truncatingIfNeeded: n) &<< 56)
    }

    /// ``hash(_:)`` of at most 15 bytes given as a short string's two little-endian words
    /// (bytes past `count` zero, the last byte ignored).
    @inlinable @inline(__always) package static func hash(words w: (UInt64, UInt64), count: Int) -> UInt64 {
        var v = hashState
        let length = UInt64(truncatingIfNeeded: count) &<< 56
        if count < 8 { return finish(&v, w.0 | length) }
        compress(&v, w.0)
        return finish(&v, (w.1 & 0x00FF_FFFF_FFFF_FFFF) | length)
    }

    /// The key of a field's name, as ``init(_:)`` makes it: a coding key's name, a parsed
    /// member name. Most are short ASCII strings, kept inline in the string's two words; their
    /// byte hash is taken from those words (``hash(words:count:)``), without the `withUTF8`
    /// call and the pass over the bytes of `init(_:)`.
    @inline(__always) package static func field(_ name: String) -> Key {
        if let (w, count) = SmallString.asciiBits(name) { return Key(name, bytesHash: hash(words: w, count: count)) }
        return Key(name)
    }

    /// SipHash's four words of state after keying, with a key from the system's random
    /// source, once per process. Never written anywhere: hashes differ from run to run, so
    /// nothing may store them or depend on their order.
    @usableFromInline package static let hashState: SipState = {
        var random = SystemRandomNumberGenerator()
        let k0 = random.next() as UInt64, k1 = random.next() as UInt64
        return SipState(v0: k0 ^ 0x736f_6d65_7073_6575, v1: k1 ^ 0x646f_7261_6e64_6f6d,
                        v2: k0 ^ 0x6c79_6765_6e65_7261, v3: k1 ^ 0x7465_6462_7974_6573)
    }()

    @usableFromInline package struct SipState: Sendable {
        @usableFromInline var v0, v1, v2, v3: UInt64
        @usableFromInline init(v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64) {
            self.v0 = v0; self.v1 = v1; self.v2 = v2; self.v3 = v3
        }
    }

    @inlinable @inline(__always) static func round(_ v: inout SipState) {
        v.v0 &+= v.v1; v.v1 = rotate(v.v1, 13); v.v1 ^= v.v0; v.v0 = rotate(v.v0, 32)
        v.v2 &+= v.v3; v.v3 = rotate(v.v3, 16); v.v3 ^= v.v2
        v.v0 &+= v.v3; v.v3 = rotate(v.v3, 21); v.v3 ^= v.v0
        v.v2 &+= v.v1; v.v1 = rotate(v.v1, 17); v.v1 ^= v.v2; v.v2 = rotate(v.v2, 32)
    }

    @inlinable @inline(__always) static func rotate(_ x: UInt64, _ n: UInt64) -> UInt64 { (x &<< n) | (x &>> (64 &- n)) }

    /// One message word, one round (the "1" of SipHash-1-3).
    @inlinable @inline(__always) static func compress(_ v: inout SipState, _ m: UInt64) {
        v.v3 ^= m
        round(&v)
        v.v0 ^= m
    }

    /// The last word (with the length in its top byte), then three finalization rounds.
    @inlinable @inline(__always) static func finish(_ v: inout SipState, _ last: UInt64) -> UInt64 {
        compress(&v, last)
        v.v2 ^= 0xff
        round(&v)
        round(&v)
        round(&v)
        return v.v0 ^ v.v1 ^ v.v2 ^ v.v3
    }

    public init(stringLiteral value: String) { self.init(value) }
    public var description: String { string }

    @inlinable public static func == (a: Key, b: Key) -> Bool {
        guard a.bytesHash == b.bytesHash else { return false }
        // Equal bits mean equal bytes (the same inline bytes of a short string, or the same
        // storage of a long one); a dictionary hit on a short key ends here, without the cost
        // of reaching both strings' bytes.
        if sameBits(a.string, b.string) { return true }
        return withBytes(a.string, b.string) { x, y in x.count == y.count && memoryEqual(x, y, count: x.count) }
    }

    @inlinable public func hash(into hasher: inout Hasher) { hasher.combine(bytesHash) }

    /// Dictionaries hash keys on every lookup; the cached hash only needs a cheap seeded mix
    /// (murmur3's finalizer), not a full SipHash round.
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        var x = bytesHash ^ UInt64(bitPattern: Int64(seed))
        x = (x ^ (x >> 33)) &* 0xff51_afd7_ed55_8ccd
        x = (x ^ (x >> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return Int(truncatingIfNeeded: x ^ (x >> 33))
    }

    @inlinable public static func < (a: Key, b: Key) -> Bool { compareBytes(a.string, b.string) < 0 }

    /// Whether this key's bytes start with `prefix`'s bytes.
    @inlinable public func hasBytePrefix(_ prefix: Key) -> Bool {
        if let answer = SmallString.hasPrefix(string, prefix.string) { return answer }
        return withBytes(string, prefix.string) { s, p in p.count <= s.count && memoryEqual(s, p, count: p.count) }
    }
}

/// Whether two strings have the same representation bits (a sufficient test of equal bytes).
@inlinable @inline(__always) func sameBits(_ a: String, _ b: String) -> Bool {
    guard MemoryLayout<String>.size == 16 else { return false }
    let x = unsafeBitCast(a, to: (UInt64, UInt64).self), y = unsafeBitCast(b, to: (UInt64, UInt64).self)
    return x.0 == y.0 && x.1 == y.1
}

/// Runs `body` on the UTF-8 bytes of two strings. `withUTF8` works for small (inline) strings
/// too, where `utf8.withContiguousStorageIfAvailable` gives up and leaves a slow path.
@inlinable func withBytes<R>(_ a: String, _ b: String,
                             _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> R) -> R {
    // Native strings hold their UTF-8 contiguously: read in place, with no copy of either
    // string (a `var` copy and `withUTF8` retained and released both at every comparison).
    if let r = a.utf8.withContiguousStorageIfAvailable({ x in b.utf8.withContiguousStorageIfAvailable { y in body(x, y) } }),
       let r {
        return r
    }
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in body(x, y) } }
}

@inlinable func memoryEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>, count: Int) -> Bool {
    var i = 0
    while i < count { if x[i] != y[i] { return false }; i += 1 }
    return true
}

extension Key {
    /// The key's first 16 bytes as two big-endian integers, zero-padded: ordering keys by
    /// these orders them bytewise, except keys whose first 16 bytes tie (then compare them
    /// whole). For sorting many keys without reaching their bytes at every comparison.
    @inlinable package var orderingHead: (UInt64, UInt64) {
        if let (w, _) = SmallString.asciiBits(string) {
            // The flags byte (the last) is not a byte of the string: a short string has at most 15.
            return (w.0.byteSwapped, (w.1 & 0x00FF_FFFF_FFFF_FFFF).byteSwapped)
        }
        return longOrderingHead
    }

    /// ``orderingHead`` of a key that is not a short ASCII string, out of line: the short
    /// path inlines where keys are compared with bounds on every read of a record.
    @usableFromInline var longOrderingHead: (UInt64, UInt64) {
        var head: (UInt64, UInt64) = (0, 0)
        func take(_ bytes: UnsafeBufferPointer<UInt8>) {
            withUnsafeMutableBytes(of: &head) { out in
                if let base = bytes.baseAddress { out.baseAddress!.copyMemory(from: base, byteCount: min(16, bytes.count)) }
            }
        }
        // In place when the bytes are contiguous (a native string): no copy of the string.
        if string.utf8.withContiguousStorageIfAvailable(take) == nil {
            var s = string
            s.withUTF8(take)
        }
        return (head.0.bigEndian, head.1.bigEndian)
    }
}

/// Bytewise three-way comparison of two strings' UTF-8.
@inlinable package func compareBytes(_ a: String, _ b: String) -> Int {
    if let answer = SmallString.compare(a, b) { return answer }
    return withBytes(a, b) { x, y in
        let n = min(x.count, y.count)
        var i = 0
        while i < n {
            if x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
            i += 1
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}

/// A key written with interpolation, `"day-\(n)"`, as a key literal is (`"d1"`).
extension Key: ExpressibleByStringInterpolation {
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }
}
