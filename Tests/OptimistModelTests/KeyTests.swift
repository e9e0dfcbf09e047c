import Testing
import OptimistTestSupport
@testable import OptimistModel

/// A key's ordering head (its first 16 bytes as two integers, which the store file's writer
/// sorts by) agrees with the keys' byte order wherever two heads differ, and ties only keys
/// whose first 16 bytes (zero-padded) are the same.
@Suite struct KeyTests {
    /// Short and long keys, ASCII and not, with NUL bytes and shared prefixes of 15, 16 and 17
    /// bytes: where the heads decide, the decision is the bytes' order.
    @Test func orderingHeadsOrderKeysByTheirBytes() {
        var g = SeededRandom(seed: 34)
        let pieces = ["a", "b", "~", "\u{0}", "\u{7F}", "é", "0", "9", "/", "\u{1F3C3}"]
        var keys: [Key] = (0..<300).map { _ in
            Key((0..<Int.random(in: 0...20, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined())
        }
        let shared: String = "2026-11-24/habit"  // 16 bytes: keys sharing it tie on their heads
        let edges: [String] = ["", "a", "a\u{0}", "ab", "2026-11-24/habi", shared, shared + "\u{0}", shared + "a", shared + "b",
                               "0123456789abcde", "0123456789abcdef", "0123456789abcdeg", "café", "cafe"]
        keys += edges.map { Key($0) }
        var decided = 0
        for a in keys {
            for b in keys {
                let x = Array(a.string.utf8), y = Array(b.string.utf8)
                let (ha, hb) = (a.orderingHead, b.orderingHead)
                if ha.0 != hb.0 || ha.1 != hb.1 {
                    decided += 1
                    #expect(((ha.0, ha.1) < (hb.0, hb.1)) == x.lexicographicallyPrecedes(y), "\(x) vs \(y)")
                } else {
                    // A tie: the first 16 bytes, zero-padded, are the same.
                    let pad = { (v: [UInt8]) in Array((v + [UInt8](repeating: 0, count: 16)).prefix(16)) }
                    #expect(pad(x) == pad(y), "\(x) vs \(y)")
                }
            }
        }
        #expect(decided > keys.count * keys.count / 2)  // the heads decide most pairs
    }

    /// Every way a key is made gives the same byte hash for the same bytes: `Key(_:)`, the
    /// hash of the bytes, the hash of a short string's words, and the JSON parser's member
    /// names (short, long, escaped, not ASCII), at every length up to 40.
    @Test func everyPathHashesTheSameBytesAlike() throws {
        var g = SeededRandom(seed: 61)
        let pieces = ["a", "Z", "0", "/", "~", "\u{0}", "é", "\u{1F3C3}", "\"", "\\"]
        var names = (0...40).map { String(repeating: "k", count: $0) }
        names += (0..<300).map { _ in (0..<Int.random(in: 0...24, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined() }
        for name in names {
            let key = Key(name)
            let bytes = Array(name.utf8)
            #expect(bytes.withUnsafeBufferPointer(Key.hash) == key.bytesHash, "\(bytes)")
            if let w = bytes.withUnsafeBufferPointer(SmallString.words) {
                #expect(Key.hash(words: w, count: bytes.count) == key.bytesHash, "\(bytes)")
            }
            let text = JSONWriter.string(.object([key: .null]))
            guard case .object(let parsed) = try JSONParser.parse(text), let k = parsed.keys.first else {
                Issue.record("\(text) did not parse to an object")
                continue
            }
            #expect(k == key && k.bytesHash == key.bytesHash, "\(text)")
        }
    }

    /// The hash tells apart keys that differ in one byte anywhere, in their length only
    /// ("a" and "a" + NUL), or in a byte past the last full word: no two of 200k keys of a
    /// habit log's shape, nor of the short edge cases, share a hash.
    @Test func theHashTellsKeysApart() {
        var seen = Set<UInt64>()
        var keys = 0
        for day in 0..<25_000 {
            for habit in 0..<8 {
                seen.insert(Key("d\(String(day + 1_000_000).dropFirst())/h\(habit)").bytesHash)
                keys += 1
            }
        }
        let edges = ["", "\u{0}", "\u{0}\u{0}", "a", "a\u{0}", "a\u{0}\u{0}", "abcdefgh", "abcdefgh\u{0}",
                     "abcdefghi", "abcdefghj", "0123456789abcdef", "0123456789abcdeg", "1123456789abcdef"]
        for e in edges { seen.insert(Key(e).bytesHash); keys += 1 }
        #expect(seen.count == keys)
    }

    /// Names chosen to share one hash cannot be chosen any more. Under the unkeyed hash of
    /// before (a multiply/xor-shift fold from a fixed start, the seed mixed in afterwards),
    /// two 16-byte names share a hash whenever their second word is the fold of their first
    /// XOR one fixed target, so a flood of them took minutes to parse: these names are made
    /// that way, and under the keyed hash they must all hash apart.
    @Test func namesMadeToCollideUnderAnUnkeyedHashHashApart() {
        let names = Self.collidingUnderUnkeyedHash(2_000)
        #expect(Set(names).count == names.count)
        let hashes = Set(names.map { Key($0).bytesHash })
        #expect(hashes.count == names.count, "\(names.count - hashes.count) collisions")
    }

    /// A difference in the top bit of the first word passed the old fold unchanged (times an
    /// odd number, then a shift by 29), so the byte strings below shared a hash under every
    /// seed. The keyed hash of bytes tells them apart.
    @Test func aSeedIndependentDifferenceNoLongerCollides() {
        func bytes(_ w0: UInt64, _ w1: UInt64) -> [UInt8] {
            (0..<16).map { i in UInt8(truncatingIfNeeded: (i < 8 ? w0 : w1) >> (8 * UInt64(i % 8))) }
        }
        let a = bytes(0x4141_4141_4141_4141, 0x4242_4242_4242_4242)
        let b = bytes(0x4141_4141_4141_4141 ^ (1 << 63), 0x4242_4242_4242_4242 ^ (1 << 63 | 1 << 34))
        #expect(a.withUnsafeBufferPointer(Key.hash) != b.withUnsafeBufferPointer(Key.hash))
    }

    /// `count` distinct ASCII names of 16 bytes that share one hash under the old unkeyed fold
    /// (found by trying first words until the second word that completes a collision is
    /// ASCII: about one try in 256).
    static func collidingUnderUnkeyedHash(_ count: Int) -> [String] {
        func fold(_ h: UInt64, _ w: UInt64) -> UInt64 {
            let x = (h ^ w) &* 0x9e37_79b9_7f4a_7c15
            return x ^ (x &>> 29)
        }
        let start: UInt64 = 0xcbf2_9ce4_8422_2325, target: UInt64 = 0x2a2a_2a2a_2a2a_2a2a
        var g = SeededRandom(seed: 47)
        var names = [String]()
        while names.count < count {
            var w0: UInt64 = 0
            for i in 0..<8 { w0 |= UInt64(UInt8.random(in: 0x21...0x7e, using: &g)) << (8 * UInt64(i)) }
            let w1 = fold(start, w0) ^ target
            guard w1 & 0x8080_8080_8080_8080 == 0, w1 & 0xFF00_0000_0000_0000 != 0 else { continue }
            var bytes = [UInt8]()
            for w in [w0, w1] { for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: w >> (8 * UInt64(i)))) } }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        return names
    }
}
