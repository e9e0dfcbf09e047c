import Synchronization

/// Short ASCII strings built straight from their bytes.
///
/// Swift keeps a string of up to 15 UTF-8 bytes inline in the string value itself (no
/// allocation). Building one through the standard library's initializers still costs a
/// closure, a second validation pass and a copy, and an app's record
/// holds many such strings: field names, short values, keys. Here the two words are written
/// directly: the bytes in order, then the count with the "small ASCII" flags in the last byte.
///
/// That layout belongs to the standard library, so it is checked once at run time against
/// strings the standard library built; if it ever differs, ``make(_:)`` returns nil and
/// callers take the ordinary path.
@usableFromInline package enum SmallString {
    @usableFromInline package static let capacity = 15

    /// The string of `bytes` when they are at most 15 ASCII bytes and the layout checks out.
    @inlinable @inline(__always)
    package static func make(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count <= capacity, layoutVerified, let w = words(bytes) else { return nil }
        return unsafeBitCast(w, to: String.self)
    }

    /// The two words of the small string of `bytes`: the bytes in memory order, the count and
    /// flags in the last byte; nil when there are more than 15 or a byte is not ASCII.
    ///
    /// The bytes are gathered with loads that never reach past `bytes` (``lowBytes(_:from:to:)``),
    /// not copied with `memcpy`: a function call for a few bytes, made for every key, field
    /// name and short value, many times a tap. The words are little-endian,
    /// which is the layout only on a little-endian machine; elsewhere the layout check
    /// (``layoutVerified``) fails and nothing uses these words.
    @inlinable @inline(__always)
    package static func words(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        let n = bytes.count
        guard n <= capacity else { return nil }
        var w: (UInt64, UInt64) = (0, 0)
        if let base = bytes.baseAddress, n > 0 {
            let p = UnsafeRawPointer(base)
            w.0 = lowBytes(p, from: 0, to: min(n, 8))
            if n > 8 { w.1 = lowBytes(p, from: 8, to: n) }
        }
        guard (w.0 | w.1) & 0x8080_8080_8080_8080 == 0 else { return nil }
        let flags: UInt8 = 0xE0 | UInt8(truncatingIfNeeded: n)  // small, ASCII, count
        w.1 |= UInt64(flags) &<< 56
        return w
    }

    /// Bytes `i..<n` of `p` (1 to 8 of them) as the low bytes of a little-endian word, zero
    /// above, read with loads that may overlap and never reach past `n`: from eight bytes in
    /// all, one load ending at `n`; below that, two 4-byte loads or three single bytes. Short
    /// strings' words and the last word of a key's hash (``Key/hash(_:)``) are gathered so.
    @inlinable @inline(__always)
    package static func lowBytes(_ p: UnsafeRawPointer, from i: Int, to n: Int) -> UInt64 {
        let count = n &- i
        if n >= 8 {
            return UInt64(littleEndian: p.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)) &>> UInt64((8 &- count) &* 8)
        }
        if count >= 4 {
            let head = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self)))
            let last = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)))
            return head | last &<< UInt64((count &- 4) &* 8)
        }
        let b = p.assumingMemoryBound(to: UInt8.self), mid = count &>> 1
        return UInt64(b[i]) | UInt64(b[i &+ mid]) &<< UInt64(mid &* 8) | UInt64(b[n &- 1]) &<< UInt64((count &- 1) &* 8)
    }

    /// The two words and the byte count of `s` when it is a short ASCII string and the layout
    /// checks out; nil otherwise (always nil on a big-endian machine).
    @inlinable @inline(__always)
    package static func asciiBits(_ s: String) -> (words: (UInt64, UInt64), count: Int)? {
        #if _endian(little)
        guard layoutVerified else { return nil }
        let w = unsafeBitCast(s, to: (UInt64, UInt64).self)
        // The last byte of a short ASCII string: 0xE0 | count (after `words(_:)`, little-endian).
        let flags = UInt8(truncatingIfNeeded: w.1 >> 56)
        guard flags & 0xF0 == 0xE0 else { return nil }
        return (w, Int(flags & 0x0F))
        #else
        return nil
        #endif
    }

    /// Whether `s` starts with `prefix`, answered from the bits when both are short ASCII
    /// strings (a view's prefix test on every change); nil otherwise.
    @inlinable @inline(__always)
    package static func hasPrefix(_ s: String, _ prefix: String) -> Bool? {
        guard let a = asciiBits(s), let p = asciiBits(prefix) else { return nil }
        let n = p.count
        guard n <= a.count else { return false }
        if n <= 8 {
            let mask: UInt64 = n == 8 ? ~0 : (1 &<< UInt64(n &* 8)) &- 1
            return (a.words.0 ^ p.words.0) & mask == 0
        }
        let mask: UInt64 = (1 &<< UInt64((n &- 8) &* 8)) &- 1
        return a.words.0 == p.words.0 && (a.words.1 ^ p.words.1) & mask == 0
    }

    /// The bytewise three-way comparison of `a` and `b`, answered from the bits when both are
    /// short ASCII strings (sorting a record's field names, ordering keys); nil otherwise.
    /// The bytes after a short string's count are zero, so two words compared as big-endian
    /// numbers order the bytes, and the count breaks a tie ("ab" before "ab\0").
    @inlinable @inline(__always)
    package static func compare(_ a: String, _ b: String) -> Int? {
        guard let x = asciiBits(a), let y = asciiBits(b) else { return nil }
        if x.words.0 != y.words.0 { return x.words.0.byteSwapped < y.words.0.byteSwapped ? -1 : 1 }
        let low: UInt64 = 0x00FF_FFFF_FFFF_FFFF  // the bytes, without the flags byte
        let xRest = (x.words.1 & low).byteSwapped, yRest = (y.words.1 & low).byteSwapped
        if xRest != yRest { return xRest < yRest ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    /// Whether strings built here are bit for bit those the standard library builds.
    ///
    /// Read on every short string built (several per tap): from an atomic with a constant
    /// initial value, which costs a load, where a lazily initialized `static let` costs a
    /// call to the runtime's once-check at every read.
    @inlinable package static var layoutVerified: Bool {
        let known = layoutState.load(ordering: .relaxed)
        if known != 0 { return known > 0 }
        return verifyLayout()
    }

    /// The check's result: 0 before it ran, 1 when the layouts match, -1 when they differ.
    @usableFromInline package static let layoutState = Atomic<Int8>(0)

    /// Runs the check and keeps its result (two threads may both run it: the same answer).
    @usableFromInline package static func verifyLayout() -> Bool {
        let ok = layoutMatches
        layoutState.store(ok ? 1 : -1, ordering: .relaxed)
        return ok
    }

    private static var layoutMatches: Bool {
        guard MemoryLayout<String>.size == 16 else { return false }
        for sample in ["", "a", "at", "habit", "d000123", "abcdefgh", "0123456789abcde"] {
            var s = sample
            let ok = s.withUTF8 { b -> Bool in
                let expected = unsafeBitCast(String(decoding: b, as: UTF8.self), to: (UInt64, UInt64).self)
                guard let built = words(b) else { return false }
                return built.0 == expected.0 && built.1 == expected.1
            }
            if !ok { return false }
        }
        return true
    }
}
