#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import OptimistModel
import OptimistTestSupport

@Suite struct JSONTests {
    @Test func parsesAndWritesCanonically() throws {
        let v = try JSONParser.parse(#" { "b" : [1, 2.5, -0, 1e3, true, null], "a" : "x\"\u00e9\n" } "#)
        #expect(JSONWriter.string(v) == #"{"a":"x\"é\n","b":[1,2.5,0,1000,true,null]}"#)
    }

    /// An object's members parse alike with whitespace (space, tab, newline, return) before
    /// and after every token or with none (the parser skips it only where the next byte is
    /// not the expected one), and a missing or wrong token is still refused where it is.
    @Test func objectsTakeWhitespaceAnywhereBetweenTokens() throws {
        let expected = #"{"a":1,"b":"c","d":{"e":[true]}}"#
        for ws in ["", " ", "\t", "\n", "\r", " \r\n\t "] {
            let text = ws + "{" + ws + #""a""# + ws + ":" + ws + "1" + ws + "," + ws + #""b""# + ws + ":" + ws
                + #""c""# + ws + "," + ws + #""d""# + ws + ":" + ws + "{" + ws + #""e""# + ws + ":" + ws + "["
                + ws + "true" + ws + "]" + ws + "}" + ws + "}" + ws
            #expect(JSONWriter.string(try JSONParser.parse(text)) == expected, "whitespace \(Array(ws.utf8))")
        }
        for bad in [#"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{"a":1 "#, #"{"a": "#, #"{ 1:2}"#, #"{"a":1,}"#,
                    "{\u{1}\"a\":1}", "{\"a\":\u{1}1}", "{\"a\":1\u{1}}", #"{"a"::1}"#] {
            #expect(throws: JSONParser.Failure.self, "\(bad)") { try JSONParser.parse(bad) }
        }
    }

    /// The C ABI's records are written into a malloc'd buffer (``MallocBytes``) instead of an
    /// array: the same text for every record, from empty to one that outgrows the first
    /// allocation many times over, with every escape and number form.
    @Test(arguments: [0, 1, 5, 40, 2_000])
    func cStringIsTheCanonicalText(_ members: Int) throws {
        var record = Record()
        for i in 0..<members {
            let value: JSON
            switch i % 6 {
            case 0: value = .string("line \(i)\n\t\"quoted\" \\ \u{1} é")
            case 1: value = .number(Double(i) * 1.5)
            case 2: value = .number(-Double(i))
            case 3: value = .array([.bool(true), .null, .object([Key("k\(i)"): .string(String(repeating: "x", count: i))])])
            case 4: value = .bool(false)
            default: value = .number(1e300)
            }
            record[Key("m\(i)")] = value
        }
        guard let c = JSONWriter.cString(record) else {
            Issue.record("out of memory")
            return
        }
        defer { free(c) }
        let text = String(cString: c)
        #expect(text == JSONWriter.string(.object(record)))
        #expect(try JSONParser.parse(text) == .object(record))
        // The members in bytewise order of their names, built here without the writer's sort
        // (which takes another path above 16 members).
        let names = record.keys.sorted { Array($0.string.utf8).lexicographicallyPrecedes(Array($1.string.utf8)) }
        let members = names.map { JSONWriter.string(.string($0.string)) + ":" + JSONWriter.string(record[$0]!) }
        #expect(text == "{" + members.joined(separator: ",") + "}")
    }

    /// The caller's-buffer writer (`optimist_get_into`): the same text with a NUL when it
    /// fits, its length always, and never a byte past the capacity when it does not.
    @Test(arguments: [0, 1, 5, 40])
    func fixedBufferHoldsTheSameText(_ members: Int) throws {
        var record = Record()
        for i in 0..<members { record[Key("m\(i)")] = i % 2 == 0 ? .string("v \(i) é\n") : .number(Double(i) / 4) }
        let text = Array(JSONWriter.string(.object(record)).utf8)
        for capacity in [0, 1, text.count - 1, text.count, text.count + 1, text.count + 64] where capacity >= 0 {
            let guardBytes = 8
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + guardBytes)
            defer { buffer.deallocate() }
            buffer.initialize(repeating: 0xAB, count: capacity + guardBytes)
            let length = JSONWriter.write(record, into: buffer, capacity: capacity)
            #expect(length == text.count)
            if length < capacity {
                #expect(Array(UnsafeBufferPointer(start: buffer, count: length)) == text)
                #expect(buffer[length] == 0)
            }
            #expect((capacity..<capacity + guardBytes).allSatisfy { buffer[$0] == 0xAB }, "wrote past \(capacity)")
        }
        #expect(JSONWriter.write(record, into: nil, capacity: 0) == text.count)
    }

    /// A record parsed where it stands inside longer text (a store's saved ops): the record,
    /// and the offset just past it; anything but an object starting right there fails.
    @Test func parsesAnObjectInPlace() throws {
        var text = Array(#"xx{"s":"}{][","n":[1,{"m":2}]},tail"#.utf8)
        let (record, end) = try text.withUnsafeMutableBufferPointer { b in try JSONParser.parseObject(UnsafeBufferPointer(b), at: 2) }
        #expect(record == ["s": "}{][", "n": [1, ["m": 2]]])
        #expect(end == text.count - ",tail".utf8.count)
        for (bad, at) in [(#"x [1]"#, 2), (#" {"a":1}"#, 0), (#"{"a":1"#, 0), (#"{"a":}"#, 0), ("{", 1)] {
            var t = Array(bad.utf8)
            #expect(throws: JSONParser.Failure.self) {
                _ = try t.withUnsafeMutableBufferPointer { b in try JSONParser.parseObject(UnsafeBufferPointer(b), at: at) }
            }
        }
    }

    @Test func sortsMembersBytewise() throws {
        let v = try JSONParser.parse(#"{"é":1,"z":2,"Z":3,"e\u0301":4}"#)
        // Canonically equivalent names stay distinct: keys compare as bytes.
        #expect(v.object?.count == 4)
        #expect(JSONWriter.string(v) == #"{"Z":3,"e\#u{301}":4,"z":2,"é":1}"#)
    }

    /// Records of 2 to 16 members (the stack sort by each name's 16-byte head) with names that
    /// tie on those 16 bytes, hold NUL, non-ASCII or nothing: always the bytewise order of
    /// the names, built here by sorting their bytes.
    @Test func sortsTrickyNamesBytewise() throws {
        var g = SeededRandom(seed: 16)
        let shared = "0123456789abcdef"  // 16 bytes: names that start with it tie on their heads
        let pool = ["", "a", "\u{0}", "a\u{0}", "é", "e\u{301}", "\u{1F3C3}", "Z", "0123456789abcde", shared, shared + "\u{0}",
                    shared + "a", shared + "b", shared + "é", shared + shared, "note", "notes", "at", "habit"]
        for round in 0..<400 {
            var record = Record()
            for name in pool.shuffled(using: &g).prefix(2 + round % 15) { record[Key(name)] = .number(Double(record.count)) }
            let names = record.keys.sorted { Array($0.string.utf8).lexicographicallyPrecedes(Array($1.string.utf8)) }
            let expected = "{" + names.map { JSONWriter.string(.string($0.string)) + ":" + JSONWriter.string(record[$0]!) }.joined(separator: ",") + "}"
            #expect(JSONWriter.string(.object(record)) == expected)
        }
    }

    /// Integers take a one-pass fast path up to 15 digits; around that limit, and for every
    /// other number form, the value must be what the general conversion gives.
    @Test(arguments: [
        ("0", 0.0), ("-0", -0.0), ("7", 7.0), ("-7", -7.0), ("1763770000123", 1763770000123.0),
        ("999999999999999", 999999999999999.0), ("-999999999999999", -999999999999999.0),
        ("1234567890123456", 1234567890123456.0), ("12345678901234567890", 12345678901234567890.0),
        ("1.5", 1.5), ("-2.25", -2.25), ("1e3", 1000.0), ("2E-2", 0.02), ("10e1", 100.0), ("0.5", 0.5),
    ])
    func parsesNumbers(_ text: String, _ value: Double) throws {
        let v = try JSONParser.parse(text)
        #expect(v == .number(value))
        #expect(v.number?.sign == value.sign)
        let inArray = try JSONParser.parse("[" + text + "," + text + "]")
        #expect(inArray == .array([.number(value), .number(value)]))
    }

    @Test(arguments: [
        "", "{", "{\"a\":}", "[1,]", "01", "-01", "00", "-", "-a", "1.", "1e", "1e+", ".5", "+1", "nul", "\"\\x\"", "{\"a\":1} x", "\"\\ud800\"",
        "\"a\u{1}\"", "1e999", "{\"a\" 1}", "[1 2]",
    ])
    func rejectsMalformed(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONParser.Failure.self) {
            try bytes.withUnsafeBufferPointer { try JSONParser.parse($0) }
        }
    }

    @Test(arguments: [
        [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0xE2, 0x82], [0x80], [0xC3], [0xF0, 0x9F, 0x98],
    ] as [[UInt8]])
    func utf8ValidatorRejectsMalformedSequences(_ bad: [UInt8]) {
        #expect(!bad.withUnsafeBufferPointer(isValidUTF8))
        #expect(throws: JSONParser.Failure.self) {
            try ([0x22] + bad + [0x22]).withUnsafeBufferPointer { try JSONParser.parse($0) }
        }
    }

    @Test func utf8ValidatorAcceptsEveryScalarLength() {
        for text in ["a", "é", "€", "😀", "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer(isValidUTF8), "\(text)")
        }
    }

    /// The validator skips ASCII eight bytes at a time: a bad or good sequence at every offset
    /// around and past those words, and ending the text, is still judged byte by byte.
    @Test func utf8ValidatorJudgesEveryOffsetAfterASCII() {
        let good: [[UInt8]] = [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80]]
        let bad: [[UInt8]] = [[0xC3, 0x28], [0x80], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98]]
        for prefix in 0...20 {
            for suffix in [0, 1, 9] {
                let ascii = Array(repeating: UInt8(ascii: "a"), count: prefix), tail = Array(repeating: UInt8(ascii: "z"), count: suffix)
                for g in good { #expect((ascii + g + tail).withUnsafeBufferPointer(isValidUTF8), "\(prefix) \(g) \(suffix)") }
                for b in bad {
                    #expect(!(ascii + b + tail).withUnsafeBufferPointer(isValidUTF8), "\(prefix) \(b) \(suffix)")
                }
            }
            #expect(Array(repeating: UInt8(ascii: "q"), count: prefix).withUnsafeBufferPointer(isValidUTF8))
        }
    }

    /// The ASCII check reads words that overlap (see ``isASCII(_:)``): a high byte at any
    /// position of text of any length up to 40 is seen, and all-ASCII text passes.
    @Test func asciiCheckSeesAHighByteAnywhere() {
        for length in 0...40 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            #expect(plain.withUnsafeBufferPointer(isASCII), "\(length)")
            for at in 0..<length {
                var bytes = plain
                bytes[at] = 0x80
                #expect(!bytes.withUnsafeBufferPointer(isASCII), "\(length) \(at)")
            }
        }
    }

    /// The string scan steps a word at a time and jumps to the first special byte it flags:
    /// an escape, a non-ASCII letter, a control character or bad UTF-8 at every position of
    /// strings of every length up to 24 (so before, inside and after whole words) is found,
    /// and the text around it is kept, in member names and in values.
    @Test func stringScanFindsEverySpecialByteWherever() throws {
        for length in 0...24 {
            for at in 0...length {
                let head = String(repeating: "a", count: at), tail = String(repeating: "z", count: length - at)
                for (inner, decoded) in [("\\\"", "\""), ("\\n", "\n"), ("é", "é"), ("\\u00e9", "é"), ("", "")] {
                    let text = head + inner + tail
                    let parsed = try JSONParser.parse("{\"" + text + "\":\"" + text + "\"}")
                    let expected = head + decoded + tail
                    #expect(parsed == .object([Key(expected): .string(expected)]), "\(length) \(at) \(inner)")
                }
                #expect(throws: JSONParser.Failure.self) { try JSONParser.parse("\"" + head + "\u{1}" + tail + "\"") }
                let bad = Array(("\"" + head).utf8) + [0xFF] + Array((tail + "\"").utf8)
                #expect(throws: JSONParser.Failure.self) { try bad.withUnsafeBufferPointer { try JSONParser.parse($0) } }
            }
        }
    }

    @Test func rejectsDeepNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == .string("😀"))
    }

    @Test func mergePatchFollowsRFC7396() throws {
        // The examples of RFC 7396 section 3, a few of them.
        let cases: [(String, String, String)] = [
            (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
            (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
            (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
            (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
            (#"{"e":null}"#, #"{"a":1}"#, #"{"a":1,"e":null}"#),
            (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        ]
        for (target, patch, result) in cases {
            let merged = JSON.mergePatch(try JSONParser.parse(target), try JSONParser.parse(patch))
            #expect(JSONWriter.string(merged) == result)
        }
    }

    /// Short ASCII strings are escaped from their inline bits, eight bytes at a time: every
    /// length up to the inline limit and past it, with each special byte at each position,
    /// against escaping done here byte by byte.
    @Test func shortStringsEscapeLikeTheRest() {
        func reference(_ s: String) -> String {
            var out = "\""
            for b in s.utf8 {
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0..<0x20: out += "\\u00" + String(b >> 4, radix: 16) + String(b & 15, radix: 16)
                default: out += String(decoding: [b], as: UTF8.self)
                }
            }
            return out + "\""
        }
        var checked = 0
        for length in 0...17 {
            let plain = String(repeating: "a", count: length)
            #expect(JSONWriter.string(.string(plain)) == reference(plain))
            for position in 0..<length {
                for special: UInt8 in [0x22, 0x5C, 0x0A, 0x01, 0x1F, 0x7F, 0x20, 0x21, 0x5B, 0x5D] {
                    var bytes = Array(plain.utf8)
                    bytes[position] = special
                    let s = String(decoding: bytes, as: UTF8.self)
                    #expect(JSONWriter.string(.string(s)) == reference(s), "length \(length), byte \(special) at \(position)")
                    checked += 1
                }
            }
        }
        #expect(checked > 1_000)
        #expect(JSONWriter.string(.string("é\"")) == "\"é\\\"\"")
    }

    /// Records appended to an array (an in-memory store's arena) through the stack buffer,
    /// and past its size straight into the array: the canonical text, after what was there.
    @Test(arguments: [0, 3, 30, 300])
    func appendedRecordsAreTheirText(_ members: Int) throws {
        var record = Record()
        for i in 0..<members { record[Key("field \(i)")] = .string("value \"\(i)\" " + String(repeating: "é", count: i % 7)) }
        var out = Array("prefix".utf8)
        JSONWriter.appendObject(record, to: &out, sorted: true)
        #expect(String(decoding: out, as: UTF8.self) == "prefix" + JSONWriter.string(.object(record)))
        var unsorted = [UInt8]()
        JSONWriter.appendObject(record, to: &unsorted, sorted: false)
        #expect(try JSONParser.parse(String(decoding: unsorted, as: UTF8.self)) == .object(record))
    }

    /// Ops are encoded straight from them: the same text as their JSON objects written by the
    /// general writer.
    @Test func opsEncodeAsTheirObjects() throws {
        let long = String(repeating: "k", count: 40)
        let ops = [
            put("c", "k", ["a": 1, "z": "\"q\"", "m": [1.5, nil, true]]), patch("coll \"x\"", Key(long), ["b": nil]),
            delete("é", "k\n"), incr("c", "k", "n", -2.5), incr(Key(long), "k", Key("f\u{1}"), 1e300),
            put("c", Key(""), [:]),
        ]
        #expect(Op.encode(ops) == JSONWriter.string(.array(ops.map(\.json))))
        #expect(Op.encodedBytes(ops) == Array(JSONWriter.string(.array(ops.map(\.json))).utf8))
        #expect(Op.encode([]) == "[]")
        #expect(try Op.decode(Op.encode(ops)) == ops)
    }

    @Test func opsRoundTripThroughTheWireForm() throws {
        let ops = [put("c", "k", ["a": 1]), patch("c", "k", ["b": nil]), delete("c", "k"), incr("c", "k", "n", -2.5)]
        let text = Op.encode(ops)
        #expect(text.hasPrefix(#"[{"coll":"c","key":"k","op":"put","value":{"a":1}}"#))
        #expect(try Op.decode(text) == ops)
        #expect(throws: OptimistError.self) { try Op.decode(#"[{"op":"zap","coll":"c","key":"k"}]"#) }
    }

    /// `sameStorage` is true only for one dictionary (or two nils): an equal record built
    /// apart is "maybe not", never "same".
    @Test func sameStorageMeansOneDictionary() {
        let r: Record = ["n": .number(1), "s": .string("a string longer than fifteen bytes")]
        let copy = r
        var apart: Record = [:]
        for (k, v) in r { apart[k] = v }
        var changed = r
        changed["n"] = .number(2)
        #expect(Record.sameStorage(r, copy))
        #expect(Record.sameStorage(nil, nil))
        #expect(!Record.sameStorage(r, nil))
        #expect(!Record.sameStorage(nil, r))
        #expect(apart == r && !Record.sameStorage(r, apart))
        #expect(!Record.sameStorage(r, changed))
        #expect(Record.sameStorage(copy, r))
    }
}
