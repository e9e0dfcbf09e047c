import Testing
import OptimistTestSupport
@testable import OptimistCore

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
}
