import Foundation
import Testing
import Optimist

/// What values become in a record, and the values that have no faithful JSON form.
@Suite struct RecordEncoderTests {
    let encoder = RecordEncoder()

    @Test func eachKindHasTheJSONFormOtherHostsRead() throws {
        let r = try encoder.encode(Everything.sample)
        #expect(r["text"] == .string("héllo \"quoted\" \u{1F3C3}"))
        #expect(r["flag"] == .bool(true))
        #expect(r["int"] == .number(-42) && r["uint8"] == .number(255) && r["int64"] == .number(9_007_199_254_740_992))
        #expect(r["float"] == .number(1.5))
        #expect(r["date"] == .string("2026-11-22T07:30:00.123456Z"))
        #expect(r["id"] == .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(r["mood"] == .string("great"))
        #expect(r["source"] == ["watch": ["model": "W7", "battery": 80]])
        #expect(r["place"] == ["name": "park", "lat": 48.2, "lon": 16.37])
        #expect(r["optionalSome"] == .string("here"))
        // A nil optional is left out (so a patch made from a value never clears by accident).
        #expect(r["optionalNone"] == nil)
        #expect(r["nestedArrays"] == [[1, 2], [], [3]])
        #expect(r["optionals"] == [1, nil, 3])
        #expect(r["byName"] == ["x": 1, "y": 2])
        #expect(r["empty"] == [])
    }

    @Test func integersBeyondTwoToThe53AreRefusedWithTheirPath() {
        struct Big: Codable { var inner: Inner; struct Inner: Codable { var counts: [Int64] } }
        #expect(throws: RecordCodingError(path: [.field("inner"), .field("counts"), .index(1)],
                                          reason: .unencodable("9007199254740993 is beyond ±2^53, where JSON numbers (doubles) lose integers"))) {
            try encoder.encode(Big(inner: .init(counts: [1, 9_007_199_254_740_993])))
        }
    }

    @Test func nonFiniteNumbersAreRefused() {
        struct M: Codable { var minutes: Double }
        let error = #expect(throws: RecordCodingError.self) { try encoder.encode(M(minutes: .nan)) }
        #expect(error?.path == [.field("minutes")])
        #expect(error?.description == "field minutes: cannot be stored: nan is not a finite number")
    }

    @Test func aRecordMustBeAnObject() throws {
        let error = #expect(throws: RecordCodingError.self) { try encoder.encode([1, 2, 3]) }
        #expect(error?.path == [])
        if case .unencodable? = error?.reason {} else { Issue.record("expected unencodable, got \(String(describing: error))") }
        // A single value still encodes on its own (a one-field patch uses this).
        #expect(try encoder.encodeValue([1, 2, 3]) == [1, 2, 3])
    }

    @Test func datesOutsideYearsOneTo9999AreRefused() {
        struct D: Codable { var at: Date }
        let error = #expect(throws: RecordCodingError.self) { try encoder.encode(D(at: Date(timeIntervalSinceReferenceDate: 1e15))) }
        #expect(error?.path == [.field("at")])
    }
}
