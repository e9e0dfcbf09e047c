import Synchronization

// Key paths carry no field names, yet views and one-field patches need the name under which a
// stored property is kept. The name is found by building sample values: `Value` is decoded
// from a probe that makes up a different value for every field, the sample is encoded, and
// the key path's value is looked up among the encoded fields. Bools have two values only, so
// the probe runs several rounds, the i-th bool field taking bit r of i in round r: a field is
// the one whose values in all rounds match the key path's.

extension TypedCollection {
    /// The stored name of the top-level field `keyPath` reads (its coding key: a custom
    /// `CodingKeys` rename is what is stored, so it is what is returned).
    ///
    /// - Throws: `.store(.misuse)` when the key path reads no top-level stored field, reads
    ///   one the probe cannot tell apart from another, or `Value` cannot be made up by the
    ///   probe (an `init(from:)` that rejects made-up values; pass the field's name to the
    ///   string overloads instead).
    public func fieldName<Field: Encodable>(_ keyPath: KeyPath<Value, Field>) throws(CollectionError) -> String {
        if let known = fieldNames.withLock({ $0[CachedKeyPath(path: keyPath)] }) { return known }
        let name = try probeFieldName(keyPath)
        fieldNames.withLock { $0[CachedKeyPath(path: keyPath)] = name }
        return name
    }

    private func probeFieldName<Field: Encodable>(_ keyPath: KeyPath<Value, Field>) throws(CollectionError) -> String {
        let encoder = RecordEncoder()
        var fieldSignatures = [String: [JSON]]()
        var pathSignature = [JSON]()
        for round in 0..<probeRounds {
            let sample: Value
            do {
                sample = try Value(from: ProbeDecoder(round: round, counter: ProbeCounter()))
            } catch {
                throw .store(.misuse("cannot make up a sample \(Value.self) to find \(keyPath)'s field (\(error)); name the field instead"))
            }
            guard let record = try? encoder.encode(sample), let value = try? encoder.encodeValue(sample[keyPath: keyPath]) else {
                throw .store(.misuse("a sample \(Value.self) does not encode; name the field instead of \(keyPath)"))
            }
            for (k, v) in record { fieldSignatures[k.string, default: []].append(v) }
            pathSignature.append(value)
        }
        let matches = fieldSignatures.filter { $0.value == pathSignature }.map(\.key)
        guard matches.count == 1 else {
            let why = matches.isEmpty ? "is not a top-level stored field of" : "cannot be told apart from another field (\(matches.sorted())) of"
            throw .store(.misuse("\(keyPath) \(why) \(Value.self); name the field instead"))
        }
        return matches[0]
    }
}

/// Names found so far, by key path (the probe decodes and encodes a value several times).
private let fieldNames = Mutex<[CachedKeyPath: String]>([:])

/// A key path as a cache key. Key paths are immutable once made, so sharing one between
/// threads is safe; `AnyKeyPath` is just not declared `Sendable`.
private struct CachedKeyPath: Hashable, @unchecked Sendable {
    let path: AnyKeyPath
}

/// Rounds of the probe: bit patterns for up to 2^8 bool fields.
private let probeRounds = 8

/// Numbers the made-up values of one sample, in the order the type asks for them.
private final class ProbeCounter {
    var next = 0
    func take() -> Int { next += 1; return next }
}

/// A decoder that makes up a value for whatever it is asked: numbers and strings distinct per
/// field, bools by the round's bit, an enum's case from `allCases`, one element per array.
private struct ProbeDecoder: Decoder {
    let round: Int
    let counter: ProbeCounter
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedDecodingContainer<K> { KeyedDecodingContainer(ProbeKeyed<K>(probe: self)) }
    func unkeyedContainer() -> any UnkeyedDecodingContainer { ProbeUnkeyed(probe: self) }
    func singleValueContainer() -> any SingleValueDecodingContainer { ProbeSingle(probe: self) }

    func bool() -> Bool { (counter.take() >> round) & 1 == 1 }
    func integer<I: FixedWidthInteger>() -> I { I(truncatingIfNeeded: counter.take()) }
    func double() -> Double { Double(counter.take()) }
    /// Shaped as a UUID, so a `UUID` field (decoded from a string) accepts it too.
    func string() -> String {
        let digits = String(counter.take(), radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }

    func value<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Bool.self { return bool() as! T }
        if T.self == String.self { return string() as! T }
        if let cases = T.self as? any CaseIterable.Type, let pick = pickCase(cases) as? T { return pick }
        return try T(from: self)
    }

    /// A case of an enum that lists them, chosen by the round's bit of the next number.
    private func pickCase<C: CaseIterable>(_ type: C.Type) -> Any? {
        let all = Array(type.allCases)
        guard !all.isEmpty else { return nil }
        return all[((counter.take() >> round) & 1) % all.count]
    }
}

private struct ProbeKeyed<K: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: ProbeDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [K] { [] }
    func contains(_ key: K) -> Bool { true }
    func decodeNil(forKey key: K) -> Bool { false }
    func decode(_ t: Bool.Type, forKey key: K) -> Bool { probe.bool() }
    func decode(_ t: String.Type, forKey key: K) -> String { probe.string() }
    func decode(_ t: Double.Type, forKey key: K) -> Double { probe.double() }
    func decode(_ t: Float.Type, forKey key: K) -> Float { Float(probe.double()) }
    func decode(_ t: Int.Type, forKey key: K) -> Int { probe.integer() }
    func decode(_ t: Int8.Type, forKey key: K) -> Int8 { probe.integer() }
    func decode(_ t: Int16.Type, forKey key: K) -> Int16 { probe.integer() }
    func decode(_ t: Int32.Type, forKey key: K) -> Int32 { probe.integer() }
    func decode(_ t: Int64.Type, forKey key: K) -> Int64 { probe.integer() }
    func decode(_ t: UInt.Type, forKey key: K) -> UInt { probe.integer() }
    func decode(_ t: UInt8.Type, forKey key: K) -> UInt8 { probe.integer() }
    func decode(_ t: UInt16.Type, forKey key: K) -> UInt16 { probe.integer() }
    func decode(_ t: UInt32.Type, forKey key: K) -> UInt32 { probe.integer() }
    func decode(_ t: UInt64.Type, forKey key: K) -> UInt64 { probe.integer() }
    func decode<T: Decodable>(_ t: T.Type, forKey key: K) throws -> T { try probe.value(t) }
    /// An optional whose made-up value is refused is left nil rather than failing the sample.
    func decodeIfPresent<T: Decodable>(_ t: T.Type, forKey key: K) throws -> T? { try? probe.value(t) }
    func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) -> KeyedDecodingContainer<NK> { probe.container(keyedBy: type) }
    func nestedUnkeyedContainer(forKey key: K) -> any UnkeyedDecodingContainer { probe.unkeyedContainer() }
    func superDecoder() -> any Decoder { probe }
    func superDecoder(forKey key: K) -> any Decoder { probe }
}

private struct ProbeUnkeyed: UnkeyedDecodingContainer {
    let probe: ProbeDecoder
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex >= 1 }

    init(probe: ProbeDecoder) { self.probe = probe }

    mutating func decodeNil() -> Bool { false }
    mutating func decode<T: Decodable>(_ t: T.Type) throws -> T {
        currentIndex += 1
        if T.self == Double.self { return probe.double() as! T }
        if T.self == Int.self { return (probe.integer() as Int) as! T }
        return try probe.value(t)
    }
    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type) -> KeyedDecodingContainer<NK> {
        currentIndex += 1
        return probe.container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer { currentIndex += 1; return probe.unkeyedContainer() }
    mutating func superDecoder() -> any Decoder { currentIndex += 1; return probe }
}

private struct ProbeSingle: SingleValueDecodingContainer {
    let probe: ProbeDecoder
    var codingPath: [any CodingKey] { [] }
    func decodeNil() -> Bool { false }
    func decode(_ t: Bool.Type) -> Bool { probe.bool() }
    func decode(_ t: String.Type) -> String { probe.string() }
    func decode(_ t: Double.Type) -> Double { probe.double() }
    func decode(_ t: Float.Type) -> Float { Float(probe.double()) }
    func decode(_ t: Int.Type) -> Int { probe.integer() }
    func decode(_ t: Int8.Type) -> Int8 { probe.integer() }
    func decode(_ t: Int16.Type) -> Int16 { probe.integer() }
    func decode(_ t: Int32.Type) -> Int32 { probe.integer() }
    func decode(_ t: Int64.Type) -> Int64 { probe.integer() }
    func decode(_ t: UInt.Type) -> UInt { probe.integer() }
    func decode(_ t: UInt8.Type) -> UInt8 { probe.integer() }
    func decode(_ t: UInt16.Type) -> UInt16 { probe.integer() }
    func decode(_ t: UInt32.Type) -> UInt32 { probe.integer() }
    func decode(_ t: UInt64.Type) -> UInt64 { probe.integer() }
    func decode<T: Decodable>(_ t: T.Type) throws -> T { try probe.value(t) }
}
