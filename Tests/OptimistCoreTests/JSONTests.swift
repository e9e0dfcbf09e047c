import Testing
@testable import OptimistCore

@Suite struct JSONTests {
    @Test func parsesAndWritesCanonically() throws {
        let v = try JSONParser.parse(#" { "b" : [1, 2.5, -0, 1e3, true, null], "a" : "x\"\u00e9\n" } "#)
        #expect(JSONWriter.string(v) == #"{"a":"x\"é\n","b":[1,2.5,0,1000,true,null]}"#)
    }

    @Test func sortsMembersBytewise() throws {
        let v = try JSONParser.parse(#"{"é":1,"z":2,"Z":3,"e\u0301":4}"#)
        // Canonically equivalent names stay distinct: keys compare as bytes.
        #expect(v.object?.count == 4)
        #expect(JSONWriter.string(v) == #"{"Z":3,"e\#u{301}":4,"z":2,"é":1}"#)
    }

    @Test(arguments: [
        "", "{", "{\"a\":}", "[1,]", "01", "1.", "-", "nul", "\"\\x\"", "{\"a\":1} x", "\"\\ud800\"",
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

    @Test func opsRoundTripThroughTheWireForm() throws {
        let ops = [put("c", "k", ["a": 1]), patch("c", "k", ["b": nil]), delete("c", "k"), incr("c", "k", "n", -2.5)]
        let text = Op.encode(ops)
        #expect(text.hasPrefix(#"[{"coll":"c","key":"k","op":"put","value":{"a":1}}"#))
        #expect(try Op.decode(text) == ops)
        #expect(throws: OptimistError.self) { try Op.decode(#"[{"op":"zap","coll":"c","key":"k"}]"#) }
    }
}
