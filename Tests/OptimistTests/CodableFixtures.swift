import Foundation
import Optimist

// Types the Codable tests share: every kind of value the coder supports, in one record.

enum Mood: String, Codable, Sendable, Equatable, CaseIterable { case tired, fine, great }

/// An enum with associated values (Codable's synthesized form: nested keyed containers).
enum Source: Codable, Sendable, Equatable {
    case manual
    case watch(model: String, battery: Int)
    case imported(String)
}

struct Place: Codable, Sendable, Equatable {
    var name: String
    var lat: Double
    var lon: Double
}

struct Everything: Codable, Sendable, Equatable {
    var text: String
    var flag: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var date: Date
    var id: UUID
    var mood: Mood
    var source: Source
    var place: Place
    var optionalSome: String?
    var optionalNone: Int?
    var tags: [String]
    var nestedArrays: [[Int]]
    var places: [Place]
    var optionals: [Int?]
    var byName: [String: Int]
    var empty: [Double]

    static let sample = Everything(
        text: "héllo \"quoted\" \u{1F3C3}", flag: true, int: -42, int8: -8, int16: 1600, int32: -32_000_000,
        int64: 9_007_199_254_740_992, uint: 7, uint8: 255, uint16: 65_535, uint32: 4_000_000_000,
        uint64: 9_007_199_254_740_991, double: 0.1 + 0.2, float: 1.5,
        date: Date(timeIntervalSinceReferenceDate: 817_025_400.123456), id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        mood: .great, source: .watch(model: "W7", battery: 80), place: Place(name: "park", lat: 48.2, lon: 16.37),
        optionalSome: "here", optionalNone: nil, tags: ["a", "b"], nestedArrays: [[1, 2], [], [3]],
        places: [Place(name: "a", lat: 1, lon: 2), Place(name: "b", lat: -1, lon: -2)],
        optionals: [1, nil, 3], byName: ["x": 1, "y": 2], empty: [])
}

/// The quick start's record: a habit done on a day.
struct HabitLog: Codable, Sendable, Equatable {
    var habit: String
    var day: String
    var done: Bool
    var minutes: Int
    var note: String?
    var at: Date
}

extension HabitLog {
    static func on(_ day: String, _ habit: String, minutes: Int, done: Bool = true) -> HabitLog {
        HabitLog(habit: habit, day: day, done: done, minutes: minutes, note: nil,
                 at: Date(timeIntervalSinceReferenceDate: 817_000_000 + Double(minutes)))
    }
}
