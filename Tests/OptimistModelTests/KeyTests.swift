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
}
