import Foundation
import Testing
import Optimist
import OptimistTestSupport

/// Values come back as they went in; stored JSON that does not fit the type is a typed error
/// naming the field, never a trap.
@Suite struct RecordDecoderTests {
    let encoder = RecordEncoder(), decoder = RecordDecoder()

    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try decoder.decode(T.self, from: encoder.encode(value))
    }

    @Test func everyKindRoundTrips() throws {
        #expect(try roundTrip(Everything.sample) == Everything.sample)
        var other = Everything.sample
        other.source = .imported("csv")
        other.optionalNone = 0
        other.mood = .tired
        #expect(try roundTrip(other) == other)
        other.source = .manual
        #expect(try roundTrip(other) == other)
    }

    @Test func throughJSONTextToo() throws {
        // What another host reads and writes: the record as JSON text and back.
        let text = JSONWriter.string(.object(try encoder.encode(Everything.sample)))
        guard case .object(let parsed) = try JSONParser.parse(text) else { Issue.record("not an object"); return }
        #expect(try decoder.decode(Everything.self, from: parsed) == Everything.sample)
    }

    @Test(arguments: [0.0, -0.5, 1.0 / 3.0, 817_025_400.123456, -978_307_200.25, 1e-9, 123.000_001, 2_524_608_000.999_999_9,
                      -63_113_904_000.0, 252_423_993_599.5])
    func datesRoundTripBitForBit(_ seconds: Double) throws {
        struct D: Codable, Equatable { var at: Date }
        let value = D(at: Date(timeIntervalSinceReferenceDate: seconds))
        #expect(try roundTrip(value).at.timeIntervalSinceReferenceDate.bitPattern == seconds.bitPattern)
    }

    /// Dates as a clock gives them (milli- and microseconds), arbitrary doubles and whole
    /// seconds, across years 0001-9999: each reads back bit for bit, and its text has the
    /// fewest fraction digits that do, judged by parsing the digits as text (`Double("0.…")`),
    /// which the writer and reader replace with arithmetic.
    @Test func randomDatesRoundTripWithTheFewestDigits() throws {
        struct D: Codable, Equatable { var at: Date }
        var rng = SeededRandom(seed: 19)
        for i in 0..<4_000 {
            let whole = Double(Int64.random(in: -63_113_904_000...252_423_993_599, using: &rng))
            let fraction: Double = switch i % 4 {
            case 0: Double(Int.random(in: 0..<1_000, using: &rng)) / 1_000
            case 1: Double(Int.random(in: 0..<1_000_000, using: &rng)) / 1_000_000
            case 2: Double.random(in: 0..<1, using: &rng)
            default: 0
            }
            let seconds = whole + fraction
            let record = try encoder.encode(D(at: Date(timeIntervalSinceReferenceDate: seconds)))
            let back = try decoder.decode(D.self, from: record).at.timeIntervalSinceReferenceDate
            #expect(back.bitPattern == seconds.bitPattern, "\(seconds)")
            guard case .string(let text)? = record["at"], let dot = text.firstIndex(of: ".") else { continue }
            let digits = String(text[text.index(after: dot)..<text.index(before: text.endIndex)])
            let base = seconds.rounded(.down)
            #expect(base + Double("0." + digits)! == seconds, "\(text)")
            // No shorter fraction, rounded to its length, reads back as the same instant.
            for n in 1..<digits.count {
                var scale = 1.0
                for _ in 0..<n { scale *= 10 }
                let scaled = ((seconds - base) * scale).rounded()
                guard scaled < scale else { continue }
                let shorter = String(repeating: "0", count: n - String(Int64(scaled)).count) + String(Int64(scaled))
                #expect(base + Double("0." + shorter)! != seconds, "\(text) could be .\(shorter)")
            }
        }
    }

    @Test func dateTextIsISO8601() throws {
        struct D: Codable, Equatable { var at: Date }
        #expect(try encoder.encode(D(at: Date(timeIntervalSince1970: 0)))["at"] == "1970-01-01T00:00:00Z")
        #expect(try encoder.encode(D(at: Date(timeIntervalSince1970: 951_825_600.25)))["at"] == "2000-02-29T12:00:00.25Z")
        // Another host's offset form reads as the same instant.
        #expect(try decoder.decode(D.self, from: ["at": "2026-11-22T09:30:00+02:00"]) == decoder.decode(D.self, from: ["at": "2026-11-22T07:30:00Z"]))
        #expect(throws: RecordCodingError(path: [.field("at")], reason: .invalidValue("\"2026-02-30T00:00:00Z\" is not an ISO 8601 date (YYYY-MM-DDTHH:MM:SS[.fff]Z)"))) {
            try decoder.decode(D.self, from: ["at": "2026-02-30T00:00:00Z"])
        }
    }

    @Test func aMismatchNamesTheFieldPath() {
        #expect(throws: RecordCodingError(path: [.field("place"), .field("lat")], reason: .typeMismatch(expected: "a number", found: "a string"))) {
            try decoder.decode(Wrapper.self, from: ["place": ["name": "x", "lat": "north", "lon": 1]])
        }
        #expect(throws: RecordCodingError(path: [.field("places"), .index(1), .field("name")], reason: .typeMismatch(expected: "a string", found: "a bool"))) {
            try decoder.decode(Many.self, from: ["places": [["name": "a", "lat": 1, "lon": 2], ["name": true, "lat": 1, "lon": 2]]])
        }
    }

    struct Wrapper: Codable, Equatable { var place: Place }
    struct Many: Codable, Equatable { var places: [Place] }

    @Test func missingAndNullNonOptionalsAreMissing() {
        #expect(throws: RecordCodingError(path: [.field("place"), .field("lon")], reason: .missing)) {
            try decoder.decode(Wrapper.self, from: ["place": ["name": "x", "lat": 1]])
        }
        #expect(throws: RecordCodingError(path: [.field("place")], reason: .missing)) {
            try decoder.decode(Wrapper.self, from: ["place": nil])
        }
    }

    @Test func integersAreNotGuessed() {
        struct I: Codable { var n: Int8 }
        #expect(throws: RecordCodingError(path: [.field("n")], reason: .invalidValue("1.5 is not an Int8 (it has a fraction or is out of range)"))) {
            try decoder.decode(I.self, from: ["n": 1.5])
        }
        #expect(throws: RecordCodingError(path: [.field("n")], reason: .invalidValue("300.0 is not an Int8 (it has a fraction or is out of range)"))) {
            try decoder.decode(I.self, from: ["n": 300])
        }
    }

    @Test func aTypesOwnErrorsKeepTheirPath() {
        struct E: Codable { var mood: Mood; var id: UUID }
        let badMood = #expect(throws: RecordCodingError.self) {
            try decoder.decode(E.self, from: ["mood": "grumpy", "id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"])
        }
        #expect(badMood?.path == [.field("mood")])
        if case .invalidValue(let why)? = badMood?.reason { #expect(why.contains("grumpy")) } else { Issue.record("\(String(describing: badMood))") }
        let badID = #expect(throws: RecordCodingError.self) { try decoder.decode(E.self, from: ["mood": "fine", "id": "not-a-uuid"]) }
        #expect(badID?.path == [.field("id")])
    }
}
