import Testing
@testable import OptimistModel
import OptimistTestSupport

/// The packed form of a saved mutation's ops (``PackedOps``): what goes in comes back, and
/// damaged bytes are refused with a reason, never a trap.
@Suite struct PackedOpsTests {
    static let long = String(repeating: "k", count: 40)

    /// Every kind of op and of value, short and long strings (kept inside the string value or
    /// not), non-ASCII text, numbers of every form, and a record too big for the stack buffer
    /// the encoder writes into first.
    static let sample: [Op] = {
        var big = Record()
        for i in 0..<300 { big[Key("field \(i)")] = .string("value \(i) " + String(repeating: "é", count: i % 9)) }
        return [
            put("c", "k", ["a": 1, "z": "\"q\"", "m": [1.5, nil, true, false, [:], []], "o": ["x": ["y": -0.25]]]),
            patch("coll \"x\"", Key(long), ["b": nil, "e": "é\n\u{0}"]),
            delete("é", "k\n"), incr("c", "k", "n", -2.5), incr(Key(long), "k", Key("f\u{1}"), 1e300),
            put("c", Key(""), [:]), put("c", "big", big),
            put("n", "numbers", ["max": .number(Double.greatestFiniteMagnitude), "tiny": .number(Double(bitPattern: 1)),
                                 "int": .number(9_007_199_254_740_994), "neg": -17, "frac": 0.1]),
        ]
    }()

    static func decode(_ bytes: [UInt8]) throws(PackedOps.Damage) -> [Op] {
        try bytes.withUnsafeBufferPointer { (b) throws(PackedOps.Damage) in try PackedOps.decode(b) }
    }

    static func decode(_ bytes: ArraySlice<UInt8>) throws(PackedOps.Damage) -> [Op] { try decode(Array(bytes)) }

    @Test func roundTripsEveryKindOfOpAndValue() throws {
        let bytes = PackedOps.bytes(Self.sample)
        #expect(bytes.first == PackedOps.mark)
        let back = try Self.decode(bytes)
        #expect(back == Self.sample)
        for (i, op) in Self.sample.enumerated() {
            let one = PackedOps.bytes([op])
            #expect(try Self.decode(one) == [op], "op \(i)")
        }
    }

    @Test func randomOpsRoundTrip() throws {
        var g = SeededRandom(seed: 41)
        for _ in 0..<2_000 {
            let ops = ModelRun.randomOps(&g)
            #expect(try Self.decode(PackedOps.bytes(ops)) == ops)
        }
    }

    /// The writer packs many mutations into one buffer: each appends after what is there.
    @Test func appendKeepsWhatIsThere() throws {
        var out = Array("prefix".utf8)
        PackedOps.append(Self.sample, to: &out)
        PackedOps.append([delete("c", "k")], to: &out)
        let first = 6..<(6 + PackedOps.bytes(Self.sample).count)
        #expect(Array(out[..<6]) == Array("prefix".utf8))
        #expect(try Self.decode(out[first]) == Self.sample)
        #expect(try Self.decode(out[first.upperBound...]) == [delete("c", "k")])
    }

    /// JSON text is never taken for packed ops, nor the other way round.
    @Test func tellsThePackedFormFromText() {
        let text = Op.encodedBytes(Self.sample)
        let packed = PackedOps.bytes(Self.sample)
        #expect(text.withUnsafeBufferPointer { PackedOps.isPacked($0) } == false)
        #expect(packed.withUnsafeBufferPointer { PackedOps.isPacked($0) })
        #expect([UInt8]().withUnsafeBufferPointer { PackedOps.isPacked($0) } == false)
    }

    static func failure(_ bytes: [UInt8]) -> String? {
        do {
            _ = try decode(bytes)
            return nil
        } catch {
            return error.description
        }
    }

    /// Each way bytes can be wrong has its reason.
    @Test(arguments: [
        ([0xB1], "the bytes end early"),
        ([0xB1, 0x00], "no ops"),
        ([0x5B, 0x5D], "not packed ops"),
        ([0xB1, 0x01, 0x07, 0x01, 0x63, 0x01, 0x6B], "unknown op kind 7"),
        ([0xB1, 0x01, 0x02, 0x01, 0x63, 0x01, 0x6B, 0x00], "bytes after the last op"),
        ([0xB1, 0x01, 0x02, 0x09, 0x63, 0x01, 0x6B], "a count runs past the end"),
        ([0xB1, 0x01, 0x02, 0x02, 0xC3, 0x28, 0x01, 0x6B], "a string is not UTF-8"),
        ([0xB1, 0x01, 0x00, 0x01, 0x63, 0x01, 0x6B, 0x01, 0x01, 0x61, 0x09], "unknown value tag 9"),
        ([0xB1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "a count is too long"),
        // incr with a NaN delta.
        ([0xB1, 0x01, 0x03, 0x01, 0x63, 0x01, 0x6B, 0x01, 0x6E, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x7F], "a number is not finite"),
    ] as [([UInt8], String)])
    func refusesDamage(_ bytes: [UInt8], _ reason: String) {
        #expect(Self.failure(bytes) == reason)
    }

    /// Nesting: as deep as a JSON record may be, and no deeper.
    @Test func nestingStopsWhereJSONDoes() throws {
        func nested(_ levels: Int, array: Bool) -> Record {  // `levels` objects (or arrays) deep
            var v = JSON.number(1)
            for _ in 1..<levels { v = array ? .array([v]) : .object(["a": v]) }
            return ["a": v]
        }
        for array in [false, true] {
            let deepest = nested(JSONParser.maxDepth, array: array)
            // The JSON parser takes a record this deep, and so does the packed form.
            #expect(try JSONParser.parseObject(JSONWriter.string(deepest)) == deepest)
            #expect(Self.failure(PackedOps.bytes([put("c", "k", deepest)])) == nil)
            // One level more: both refuse it.
            let deeper = nested(JSONParser.maxDepth + 1, array: array)
            #expect(throws: (any Error).self) { try JSONParser.parseObject(JSONWriter.string(deeper)) }
            #expect(Self.failure(PackedOps.bytes([put("c", "k", deeper)])) == "nesting too deep")
        }
    }

    /// Every shortened copy of good bytes is refused; every byte changed to every value either
    /// decodes or is refused (no trap, no runaway allocation).
    @Test func damagedBytesNeverTrap() {
        let good = PackedOps.bytes([put("c", "k", ["a": [1, "two", ["x": nil]], "b": true]), incr("c", "k", "n", 2)])
        for n in 0..<good.count {
            #expect(Self.failure(Array(good[..<n])) != nil, "the first \(n) bytes")
        }
        for i in good.indices {
            for v in 0...255 where UInt8(v) != good[i] {
                var bad = good
                bad[i] = UInt8(v)
                _ = Self.failure(bad)
            }
        }
    }
}
