#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Optimist
import OptimistFoundation

/// Issue #19's benchmark: a put and a get of a habit log through a typed collection (Codable
/// in and out) beside the same calls with the record spelled as JSON, on an in-memory store of
/// `records` logs. A third row of each is what an app without the typed API does with a
/// `HabitLog`: the untyped put of a record it builds from the log's fields by hand (inside
/// the timing), and the untyped get followed by reading the fields by hand, the date included.
/// A fourth get row decodes through ``FloorDecoder``, which reads nothing: Codable's own cost.
///
/// Each call is timed alone, on a key of its own drawn at random, right after an untimed read
/// of that key: every timed call finds its record parsed in the store's cache (the state of a
/// record an app shows, then updates or reads again), so the engine's work is the same for
/// both APIs and the difference is the coding. (Timing two puts on the same key one after the
/// other would give the second one the cache the first one filled.) Puts are committed
/// untimed so the pending count stays put.
enum TypedBench {
    struct HabitLog: Codable, Sendable {
        var habit: String
        var day: String
        var done: Bool
        var minutes: Int
        var note: String?
        var at: Date
    }

    /// The `i`th log. Its time has microseconds, as a clock's reading has.
    static func log(_ i: Int) -> HabitLog {
        HabitLog(habit: "h" + Workload.pad(i % 8, 3), day: Workload.day(i / 8), done: i % 3 != 0, minutes: 10 + i % 50,
                 note: i % 4 == 0 ? "windy" : nil,
                 at: Date(timeIntervalSinceReferenceDate: 817_000_000 + Double(i) + Double(i &* 7_919 % 1_000_000) / 1_000_000))
    }

    static func key(_ i: Int) -> Key { Key("r" + Workload.pad(i, 7)) }

    /// A stored log read into a `HabitLog` by hand, the way `RecordDecoder` reads it (the
    /// same strictness, the same ISO 8601 date parser).
    static func byHand(_ r: Record) throws -> HabitLog {
        guard case .string(let habit)? = r["habit"], case .string(let day)? = r["day"], case .bool(let done)? = r["done"],
              case .number(let m)? = r["minutes"], let minutes = Int(exactly: m), let at = r["at"] else {
            throw OptimistError.misuse("not a habit log")
        }
        var note: String?
        switch r["note"] {
        case .string(let n)?: note = n
        case nil, .null?: note = nil
        default: throw OptimistError.misuse("not a habit log")
        }
        return HabitLog(habit: habit, day: day, done: done, minutes: minutes, note: note, at: try Date(jsonValue: at))
    }

    /// A log's record built by hand from its fields, the date as `RecordEncoder` writes it:
    /// what an app without the typed API does to put a `HabitLog`.
    static func byHand(_ log: HabitLog) throws -> Record {
        var r: Record = ["habit": .string(log.habit), "day": .string(log.day), "done": .bool(log.done),
                         "minutes": .number(Double(log.minutes)), "at": try log.at.jsonValue()]
        if let note = log.note { r["note"] = .string(note) }
        return r
    }

    static func run(records: Int, samples: Int, warmup: Int) throws {
        let store = Store()
        let logs = store.collection("logs", of: HabitLog.self)
        let encoder = RecordEncoder()
        // The untyped side gets the same records, already as JSON: what an app spelling its
        // records by hand hands to mutate.
        let asRecords = try (0..<1024).map { try encoder.encode(log($0)) }
        let values = (0..<1024).map(log)
        for i in 0..<records { try store.serverApply([.put(collection: "logs", key: key(i), value: asRecords[i % 1024])]) }

        var rng = Rand(seed: 19)
        var typedPut = [UInt64](), untypedPut = [UInt64](), handPut = [UInt64](), typedGet = [UInt64](), untypedGet = [UInt64](), handGet = [UInt64]()
        var floorGet = [UInt64]()
        var sink = 0
        /// A random key, read once (untimed) so its record is in the cache.
        func warmKey() throws -> Key {
            let k = key(rng.below(records))
            sink &+= try store.get("logs", k)?.count ?? 0
            return k
        }
        for s in 0..<(warmup + samples) {
            let v = s % 1024
            var id: MutationID = 0
            var k = try warmKey()
            let tu = try timeNs { id = try store.mutate([.put(collection: "logs", key: k, value: asRecords[v])]) }
            try store.commit(id)
            k = try warmKey()
            let tt = try timeNs { id = try logs.put(values[v], at: k) }
            try store.commit(id)
            k = try warmKey()
            let th = try timeNs { id = try store.mutate([.put(collection: "logs", key: k, value: try byHand(values[v]))]) }
            try store.commit(id)
            k = try warmKey()
            let gu = try timeNs { sink &+= try store.get("logs", k)?.count ?? 0 }
            k = try warmKey()
            let gt = try timeNs { sink &+= try logs.get(k)?.minutes ?? 0 }
            k = try warmKey()
            let gh = try timeNs { sink &+= try store.get("logs", k).map(byHand)?.minutes ?? 0 }
            k = try warmKey()
            let gf = try timeNs { if try store.get("logs", k) != nil { sink &+= try HabitLog(from: FloorDecoder()).minutes } }
            if s >= warmup {
                floorGet.append(gf)
                untypedPut.append(tu); typedPut.append(tt); handPut.append(th); untypedGet.append(gu); typedGet.append(gt); handGet.append(gh)
            }
        }
        let left = try store.pendingCount()
        precondition(sink != 0 && left == 0, "pending count drifted")
        // Both reads give the same value.
        for i in 0..<1024 {
            let k = key(i)
            guard let typed = try logs.get(k), let hand = try store.get("logs", k).map(byHand),
                  typed.at == hand.at, typed.minutes == hand.minutes, typed.note == hand.note else {
                preconditionFailure("typed and by-hand reads differ at \(k)")
            }
        }
        for (op, api, samples) in [("put", "untyped", untypedPut), ("put", "typed", typedPut), ("put", "untyped_by_hand", handPut),
                                   ("get", "untyped", untypedGet), ("get", "typed", typedGet),
                                   ("get", "untyped_by_hand", handGet), ("get", "codable_floor", floorGet)] {
            emit([("section", .str("typed")), ("host", .str("swift")), ("op", .str(op)), ("api", .str(api)),
                  ("records", .int(records))] + Summary(ns: samples).fields)
        }
        try store.close()
    }
}

/// The floor under any `Codable` decoding of a `HabitLog`: a decoder that looks nothing up and
/// parses nothing (every field reads as a constant), so what it costs is the standard
/// library's part alone: `init(from:)` through the type-erased containers, their boxes and
/// the runtime's generic lookups. The typed get cannot cost less than the untyped get plus
/// this, whatever decoder the library ships.
struct FloorDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<K: CodingKey>(keyedBy type: K.Type) throws -> KeyedDecodingContainer<K> {
        KeyedDecodingContainer(Keyed<K>())
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "floor")) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single() }

    struct Keyed<K: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] { [] }
        var allKeys: [K] { [] }
        func contains(_ key: K) -> Bool { true }
        func decodeNil(forKey key: K) throws -> Bool { false }
        func decode(_ t: Bool.Type, forKey key: K) throws -> Bool { true }
        func decode(_ t: String.Type, forKey key: K) throws -> String { "h001" }
        func decode(_ t: Int.Type, forKey key: K) throws -> Int { 10 }
        func decodeIfPresent(_ t: String.Type, forKey key: K) throws -> String? { nil }
        func decode<T: Decodable>(_ t: T.Type, forKey key: K) throws -> T { try T(from: FloorDecoder()) }
        func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) throws -> KeyedDecodingContainer<NK> {
            KeyedDecodingContainer(Keyed<NK>())
        }
        func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer { try FloorDecoder().unkeyedContainer() }
        func superDecoder() throws -> any Decoder { FloorDecoder() }
        func superDecoder(forKey key: K) throws -> any Decoder { FloorDecoder() }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode(_ t: Double.Type) throws -> Double { 817_000_000 }
        func decode<T: Decodable>(_ t: T.Type) throws -> T { try T(from: FloorDecoder()) }
        func decode(_ t: Bool.Type) throws -> Bool { true }
        func decode(_ t: String.Type) throws -> String { "" }
        func decode(_ t: Int.Type) throws -> Int { 0 }
    }
}
