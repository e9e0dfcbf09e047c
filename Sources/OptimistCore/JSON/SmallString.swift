/// Short ASCII strings built straight from their bytes.
///
/// Swift keeps a string of up to 15 UTF-8 bytes inline in the string value itself (no
/// allocation). Building one through the standard library's initializers still costs about a
/// hundred instructions (a closure, a second validation pass, a copy), and an app's record
/// holds many such strings: field names, short values, keys. Here the two words are written
/// directly: the bytes in order, then the count with the "small ASCII" flags in the top byte.
///
/// That layout belongs to the standard library, so it is checked once at run time against
/// strings the standard library built; if it ever differs, ``make(_:)`` returns nil and
/// callers take the ordinary path.
public enum SmallString {
    public static let capacity = 15

    /// The string of `bytes` when they are at most 15 ASCII bytes and the layout checks out.
    @inlinable @inline(__always)
    public static func make(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let n = bytes.count
        guard n <= capacity, layoutVerified, let base = bytes.baseAddress else { return nil }
        var low: UInt64 = 0, high: UInt64 = 0, any: UInt8 = 0
        var i = 0
        while i < n && i < 8 { any |= base[i]; low |= UInt64(base[i]) &<< UInt64(i &* 8); i &+= 1 }
        while i < n { any |= base[i]; high |= UInt64(base[i]) &<< UInt64((i &- 8) &* 8); i &+= 1 }
        guard any < 0x80 else { return nil }
        return unsafeBitCast((low, high | (0xE0 | UInt64(n)) &<< 56), to: String.self)
    }

    /// Whether strings built here are bit for bit those the standard library builds.
    public static let layoutVerified: Bool = {
        guard MemoryLayout<String>.size == 16 else { return false }
        for sample in ["", "a", "at", "habit", "d000123", "abcdefgh", "0123456789abcde"] {
            var s = sample
            let ok = s.withUTF8 { b -> Bool in
                let expected = String(decoding: b, as: UTF8.self)
                let built = directBits(b)
                let e = unsafeBitCast(expected, to: (UInt64, UInt64).self)
                return built.0 == e.0 && built.1 == e.1
            }
            if !ok { return false }
        }
        return true
    }()

    /// The two words ``make(_:)`` would write, without the check (used by the check).
    static func directBits(_ b: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        var low: UInt64 = 0, high: UInt64 = 0
        for (i, c) in b.enumerated() {
            if i < 8 { low |= UInt64(c) << UInt64(i * 8) } else { high |= UInt64(c) << UInt64((i - 8) * 8) }
        }
        return (low, high | (0xE0 | UInt64(b.count)) << 56)
    }
}
