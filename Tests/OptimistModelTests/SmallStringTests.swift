import Testing
@testable import OptimistModel

/// Strings built from their bytes (``SmallString``, used by the JSON parser and the C
/// boundary) behave exactly like the standard library's: same text, count, equality, hash and
/// order, for every length up to 15; longer or non-ASCII input is left to the normal path.
@Suite struct SmallStringTests {
    @Test func layoutMatchesTheStandardLibrary() {
        #expect(SmallString.layoutVerified)
    }

    @Test func everyLengthBehavesLikeAStandardString() {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789/_-{}~ ".utf8)
        var seed: UInt64 = 7
        for length in 0...SmallString.capacity {
            for _ in 0..<50 {
                var bytes = [UInt8]()
                for _ in 0..<length {
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    bytes.append(alphabet[Int(seed >> 33) % alphabet.count])
                }
                let expected = String(decoding: bytes, as: UTF8.self)
                guard let built = bytes.withUnsafeBufferPointer(SmallString.make) else {
                    Issue.record("no small string for \(expected)")
                    continue
                }
                #expect(built == expected)
                #expect(built.utf8.count == length)
                #expect(Array(built.utf8) == bytes)
                #expect(built.hashValue == expected.hashValue)
                #expect((built + "!") == (expected + "!"))
                #expect(Key(built) == Key(expected))
                #expect(!(Key(built) < Key(expected)) && !(Key(expected) < Key(built)))
            }
        }
    }

    /// The words are gathered with loads that overlap (see ``SmallString/words(_:)``): a byte
    /// that is not ASCII is seen wherever it is, at every length.
    @Test func aByteThatIsNotASCIIIsSeenAnywhere() {
        for length in 1...SmallString.capacity {
            for at in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "k"), count: length)
                bytes[at] = 0xC3
                #expect(bytes.withUnsafeBufferPointer(SmallString.words) == nil, "length \(length), at \(at)")
            }
        }
        for length in [16, 17, 40] {  // too long for two words: no words, no small string
            #expect([UInt8](repeating: 0x61, count: length).withUnsafeBufferPointer(SmallString.words) == nil)
            #expect([UInt8](repeating: 0x61, count: length).withUnsafeBufferPointer(SmallString.make) == nil)
        }
    }

    /// Bytewise order from the bits of two short ASCII strings is the order of their bytes:
    /// every pair of random strings of length 0 to 17 (so short, long and mixed pairs), over an
    /// alphabet with NUL, DEL and a non-ASCII letter, and shared prefixes of every length.
    @Test func comparisonIsTheOrderOfTheBytes() {
        let alphabet = Array("\u{0}ab~\u{7F}Z09".utf8) + [0xC3, 0xA9]  // é split, rejoined below
        var seed: UInt64 = 11
        func next() -> Int { seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return Int(seed >> 33) }
        func random() -> String {
            var bytes = [UInt8]()
            for _ in 0..<(next() % 18) {
                let c = alphabet[next() % (alphabet.count - 1)]
                bytes += c == 0xC3 ? [0xC3, 0xA9] : [c]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        func expected(_ a: String, _ b: String) -> Int {
            let x = Array(a.utf8), y = Array(b.utf8)
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        }
        var strings = (0..<400).map { _ in random() }
        strings += (0...15).map { String(repeating: "k", count: $0) } + ["ab", "ab\u{0}", "ab\u{0}\u{0}", "a\u{7F}", "a~"]
        var fromBits = 0
        for a in strings {
            for b in strings.prefix(120) + strings.suffix(21) {
                #expect(compareBytes(a, b) == expected(a, b), "\(Array(a.utf8)) vs \(Array(b.utf8))")
                if SmallString.compare(a, b) != nil { fromBits += 1 }
            }
        }
        #expect(fromBits > 10_000)  // the fast path was really taken
    }

    /// The coder's keys for field names hash short ASCII names from the string's bits; every
    /// name must get the very key (and byte hash) `Key(_:)` gives, or a field is not found.
    @Test func fieldKeysAreTheKeysOfTheirNames() {
        let names = ["", "a", "at", "done", "minutes", "abcdefgh", "abcdefghi", "0123456789abcde",
                     "0123456789abcdef", "a much longer field name", "café", "naïve", "\u{1F3C3}"]
        for name in names + (0...15).map({ String(repeating: "x", count: $0) }) {
            let fast = Key.field(name), plain = Key(name)
            #expect(fast == plain && fast.bytesHash == plain.bytesHash, "\(name)")
            // Also from bytes, as the JSON parser makes names.
            let fromBytes = Array(name.utf8).withUnsafeBufferPointer(stringFromValidUTF8)
            #expect(Key.field(fromBytes).bytesHash == plain.bytesHash, "\(name)")
        }
    }

    @Test func longOrNonASCIIInputIsLeftToTheNormalPath() {
        let long = Array("0123456789abcdef".utf8)
        #expect(long.withUnsafeBufferPointer(SmallString.make) == nil)
        let accented = Array("café".utf8)
        #expect(accented.withUnsafeBufferPointer(SmallString.make) == nil)
        // The general entry point still gives the right strings for both.
        #expect(long.withUnsafeBufferPointer(stringFromValidUTF8) == "0123456789abcdef")
        #expect(accented.withUnsafeBufferPointer(stringFromValidUTF8) == "café")
    }

    /// Keys compare by bytes whether or not they share a representation: a short key built
    /// from bytes, one from a literal, and long keys in separate buffers.
    @Test func keyEqualityDoesNotDependOnRepresentation() {
        let bytes = Array("d000334/t000123".utf8)
        let built = Key(bytes.withUnsafeBufferPointer(stringFromValidUTF8))
        #expect(built == Key("d000334/t000123"))
        #expect(built != Key("d000334/t000124"))
        let a = Key(String(repeating: "x", count: 40) + "1"), b = Key(String(repeating: "x", count: 40) + "1")
        #expect(a == b)
        #expect(a != Key(String(repeating: "x", count: 40) + "2"))
        // Canonically equivalent but different bytes: different keys.
        #expect(Key("\u{E9}") != Key("e\u{301}"))
    }

    /// The bit-level prefix test agrees with a byte comparison for every pair of short keys.
    @Test func prefixFromBitsAgreesWithBytes() {
        let words = ["", "d", "d0", "d000334", "d000334/", "d000334/t", "d000334/t000123", "d000335/", "e",
                     "abcdefgh", "abcdefghi", "abcdefgh/", "0123456789abcde", "0123456789abcdf"]
        for s in words {
            for p in words {
                let expected = s.utf8.starts(with: p.utf8)
                #expect(SmallString.hasPrefix(s, p) == expected, "\(s) \(p)")
                #expect(Key(s).hasBytePrefix(Key(p)) == expected)
            }
        }
        // Long or non-ASCII strings are left to the byte comparison.
        #expect(SmallString.hasPrefix(String(repeating: "a", count: 20), "a") == nil)
        #expect(SmallString.hasPrefix("é", "") == nil)
        #expect(Key(String(repeating: "a", count: 20)).hasBytePrefix(Key("aa")))
        #expect(Key("éa").hasBytePrefix(Key("é")))
    }
}
