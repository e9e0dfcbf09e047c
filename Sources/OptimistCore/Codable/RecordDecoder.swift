/// Turns a stored ``Record`` (or any ``JSON`` value) into an app's `Decodable` value, straight
/// from the engine's values: no JSON text in between, and no Foundation.
///
/// Strict where a silent guess would corrupt data: a number with a fraction, or out of range,
/// does not become an integer; a string does not become a number. Every failure is a
/// ``RecordCodingError`` with the coding path to the field; nothing traps.
public struct RecordDecoder: Sendable {
    public init() {}

    /// The value of type `type` that `record` holds.
    ///
    /// - Throws: ``RecordCodingError`` naming the field (its collection and key are nil: the
    ///   typed collections fill them in).
    public func decode<T: Decodable>(_ type: T.Type, from record: Record) throws(RecordCodingError) -> T {
        try decodeValue(type, from: .object(record))
    }

    /// The value of type `type` that `json` holds (for a single field).
    public func decodeValue<T: Decodable>(_ type: T.Type, from json: JSON) throws(RecordCodingError) -> T {
        let root = ValueDecoder(value: json, parent: nil, key: nil)
        do {
            return try root.unbox(json, as: type, key: nil)
        } catch {
            throw recordCodingError(error, at: [])
        }
    }
}

/// The `Decoder` for one value; like ``ValueEncoder`` it is its own coding-path node.
final class ValueDecoder: Decoder {
    let value: JSON
    let parent: ValueDecoder?
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSON, parent: ValueDecoder?, key: (any CodingKey)?) {
        self.value = value
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var keys = [any CodingKey]()
        var node: ValueDecoder? = self
        while let n = node {
            if let k = n.key { keys.append(k) }
            node = n.parent
        }
        return keys.reversed()
    }

    func error(_ reason: RecordCodingError.Reason, key: (any CodingKey)?) -> RecordCodingError {
        RecordCodingError(path: (codingPath + (key.map { [$0] } ?? [])).map { .init($0) }, reason: reason)
    }

    /// `json` is not the `expected` JSON type: missing when it is null, a mismatch otherwise.
    func mismatch(_ expected: String, _ json: JSON, key: (any CodingKey)?) -> RecordCodingError {
        if case .null = json { return error(.missing, key: key) }
        return error(.typeMismatch(expected: expected, found: json.typeName), key: key)
    }

    // MARK: Values

    func bool(_ json: JSON, key: (any CodingKey)?) throws(RecordCodingError) -> Bool {
        guard case .bool(let b) = json else { throw mismatch("a bool", json, key: key) }
        return b
    }

    func string(_ json: JSON, key: (any CodingKey)?) throws(RecordCodingError) -> String {
        guard case .string(let s) = json else { throw mismatch("a string", json, key: key) }
        return s
    }

    func double(_ json: JSON, key: (any CodingKey)?) throws(RecordCodingError) -> Double {
        guard case .number(let d) = json else { throw mismatch("a number", json, key: key) }
        return d
    }

    func float(_ json: JSON, key: (any CodingKey)?) throws(RecordCodingError) -> Float {
        let d = try double(json, key: key)
        let f = Float(d)
        guard f.isFinite || !d.isFinite else { throw error(.invalidValue("\(d) does not fit a Float"), key: key) }
        return f
    }

    func integer<I: FixedWidthInteger>(_ json: JSON, key: (any CodingKey)?) throws(RecordCodingError) -> I {
        let d = try double(json, key: key)
        guard let i = I(exactly: d) else {
            throw error(.invalidValue("\(d) is not an \(I.self) (it has a fraction or is out of range)"), key: key)
        }
        return i
    }

    /// Any decodable value, with fast paths for the common leaf types.
    func unbox<T: Decodable>(_ json: JSON, as type: T.Type, key: (any CodingKey)?) throws -> T {
        if T.self == String.self { return try string(json, key: key) as! T }
        if T.self == Bool.self { return try bool(json, key: key) as! T }
        if T.self == Int.self { return try (integer(json, key: key) as Int) as! T }
        if T.self == Double.self { return try double(json, key: key) as! T }
        if let own = T.self as? any JSONRepresentable.Type {
            do { return try own.init(jsonValue: json) as! T } catch { throw self.error(error, key: key) }
        }
        let child = ValueDecoder(value: json, parent: self, key: key)
        do {
            return try T(from: child)
        } catch let e as RecordCodingError {
            throw e
        } catch {
            throw recordCodingError(error, at: child.codingPath)
        }
    }

    // MARK: Decoder

    func container<K: CodingKey>(keyedBy type: K.Type) throws -> KeyedDecodingContainer<K> {
        guard case .object(let members) = value else { throw mismatch("an object", value, key: nil) }
        return KeyedDecodingContainer(KeyedRecordDecoder<K>(decoder: self, members: members))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch("an array", value, key: nil) }
        return UnkeyedRecordDecoder(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleRecordDecoder(decoder: self) }
}

struct KeyedRecordDecoder<K: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let members: [FieldKey: JSON]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [K] { members.keys.compactMap { K(stringValue: $0.string) } }

    func contains(_ key: K) -> Bool { members[FieldKey(key.stringValue)] != nil }

    /// The member, or the error for a missing one.
    func member(_ key: K) throws(RecordCodingError) -> JSON {
        guard let v = members[FieldKey(key.stringValue)] else { throw decoder.error(.missing, key: key) }
        return v
    }

    func decodeNil(forKey key: K) throws -> Bool {
        guard let v = members[FieldKey(key.stringValue)] else { return true }
        if case .null = v { return true }
        return false
    }

    func decode(_ t: Bool.Type, forKey key: K) throws -> Bool { try decoder.bool(member(key), key: key) }
    func decode(_ t: String.Type, forKey key: K) throws -> String { try decoder.string(member(key), key: key) }
    func decode(_ t: Double.Type, forKey key: K) throws -> Double { try decoder.double(member(key), key: key) }
    func decode(_ t: Float.Type, forKey key: K) throws -> Float { try decoder.float(member(key), key: key) }
    func decode(_ t: Int.Type, forKey key: K) throws -> Int { try decoder.integer(member(key), key: key) }
    func decode(_ t: Int8.Type, forKey key: K) throws -> Int8 { try decoder.integer(member(key), key: key) }
    func decode(_ t: Int16.Type, forKey key: K) throws -> Int16 { try decoder.integer(member(key), key: key) }
    func decode(_ t: Int32.Type, forKey key: K) throws -> Int32 { try decoder.integer(member(key), key: key) }
    func decode(_ t: Int64.Type, forKey key: K) throws -> Int64 { try decoder.integer(member(key), key: key) }
    func decode(_ t: UInt.Type, forKey key: K) throws -> UInt { try decoder.integer(member(key), key: key) }
    func decode(_ t: UInt8.Type, forKey key: K) throws -> UInt8 { try decoder.integer(member(key), key: key) }
    func decode(_ t: UInt16.Type, forKey key: K) throws -> UInt16 { try decoder.integer(member(key), key: key) }
    func decode(_ t: UInt32.Type, forKey key: K) throws -> UInt32 { try decoder.integer(member(key), key: key) }
    func decode(_ t: UInt64.Type, forKey key: K) throws -> UInt64 { try decoder.integer(member(key), key: key) }
    func decode<T: Decodable>(_ t: T.Type, forKey key: K) throws -> T { try decoder.unbox(member(key), as: t, key: key) }

    func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) throws -> KeyedDecodingContainer<NK> {
        try ValueDecoder(value: member(key), parent: decoder, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: member(key), parent: decoder, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let k = RecordCodingKey.superKey
        return ValueDecoder(value: members[FieldKey(k.stringValue)] ?? .null, parent: decoder, key: k)
    }

    func superDecoder(forKey key: K) throws -> any Decoder {
        ValueDecoder(value: members[FieldKey(key.stringValue)] ?? .null, parent: decoder, key: key)
    }
}

struct UnkeyedRecordDecoder: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let items: [JSON]
    private(set) var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(decoder: ValueDecoder, items: [JSON]) {
        self.decoder = decoder
        self.items = items
    }

    private var key: RecordCodingKey { RecordCodingKey(intValue: currentIndex) }

    /// The next element, consumed.
    private mutating func next() throws(RecordCodingError) -> JSON {
        guard !isAtEnd else { throw decoder.error(.missing, key: key) }
        defer { currentIndex += 1 }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = items[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ t: Bool.Type) throws -> Bool { let k = key; return try decoder.bool(next(), key: k) }
    mutating func decode(_ t: String.Type) throws -> String { let k = key; return try decoder.string(next(), key: k) }
    mutating func decode(_ t: Double.Type) throws -> Double { let k = key; return try decoder.double(next(), key: k) }
    mutating func decode(_ t: Float.Type) throws -> Float { let k = key; return try decoder.float(next(), key: k) }
    mutating func decode(_ t: Int.Type) throws -> Int { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: Int8.Type) throws -> Int8 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: Int16.Type) throws -> Int16 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: Int32.Type) throws -> Int32 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: Int64.Type) throws -> Int64 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: UInt.Type) throws -> UInt { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: UInt8.Type) throws -> UInt8 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: UInt16.Type) throws -> UInt16 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: UInt32.Type) throws -> UInt32 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode(_ t: UInt64.Type) throws -> UInt64 { let k = key; return try decoder.integer(next(), key: k) }
    mutating func decode<T: Decodable>(_ t: T.Type) throws -> T { let k = key; return try decoder.unbox(next(), as: t, key: k) }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type) throws -> KeyedDecodingContainer<NK> {
        let k = key
        return try ValueDecoder(value: next(), parent: decoder, key: k).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let k = key
        return try ValueDecoder(value: next(), parent: decoder, key: k).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let k = key
        return try ValueDecoder(value: next(), parent: decoder, key: k)
    }
}

struct SingleRecordDecoder: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var value: JSON { decoder.value }

    func decodeNil() -> Bool { if case .null = value { return true }; return false }
    func decode(_ t: Bool.Type) throws -> Bool { try decoder.bool(value, key: nil) }
    func decode(_ t: String.Type) throws -> String { try decoder.string(value, key: nil) }
    func decode(_ t: Double.Type) throws -> Double { try decoder.double(value, key: nil) }
    func decode(_ t: Float.Type) throws -> Float { try decoder.float(value, key: nil) }
    func decode(_ t: Int.Type) throws -> Int { try decoder.integer(value, key: nil) }
    func decode(_ t: Int8.Type) throws -> Int8 { try decoder.integer(value, key: nil) }
    func decode(_ t: Int16.Type) throws -> Int16 { try decoder.integer(value, key: nil) }
    func decode(_ t: Int32.Type) throws -> Int32 { try decoder.integer(value, key: nil) }
    func decode(_ t: Int64.Type) throws -> Int64 { try decoder.integer(value, key: nil) }
    func decode(_ t: UInt.Type) throws -> UInt { try decoder.integer(value, key: nil) }
    func decode(_ t: UInt8.Type) throws -> UInt8 { try decoder.integer(value, key: nil) }
    func decode(_ t: UInt16.Type) throws -> UInt16 { try decoder.integer(value, key: nil) }
    func decode(_ t: UInt32.Type) throws -> UInt32 { try decoder.integer(value, key: nil) }
    func decode(_ t: UInt64.Type) throws -> UInt64 { try decoder.integer(value, key: nil) }
    func decode<T: Decodable>(_ t: T.Type) throws -> T { try decoder.unbox(value, as: t, key: nil) }
}
