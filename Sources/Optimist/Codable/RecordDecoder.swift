/// Turns a stored ``/OptimistModel/Record`` (or any ``/OptimistModel/JSON`` value) into an app's `Decodable` value, straight
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
        try decode(type, from: record, representsItself: T.self is any JSONRepresentable.Type)
    }

    /// ``decode(_:from:)`` for a caller that already knows whether `T` conforms to
    /// ``JSONRepresentable`` (a typed collection asks once, when it is made): the runtime's
    /// conformance lookup is a noticeable share of decoding a small record.
    package func decode<T: Decodable>(_ type: T.Type, from record: Record, representsItself: Bool) throws(RecordCodingError) -> T {
        if representsItself { return try decodeValue(type, from: .object(record)) }
        let root = ValueDecoder(value: .object(record), members: record, parent: nil, key: nil)
        do {
            return try T(from: root)
        } catch {
            throw recordCodingError(error, at: [])
        }
    }

    /// The value of type `type` that `json` holds (for a single field).
    public func decodeValue<T: Decodable>(_ type: T.Type, from json: JSON) throws(RecordCodingError) -> T {
        let root = ValueDecoder(value: json, parent: nil, key: nil)
        do {
            return try root.unbox(json, as: type, key: NoKey())
        } catch {
            throw recordCodingError(error, at: [])
        }
    }
}

/// The `Decoder` for one value; like ``ValueEncoder`` it is its own coding-path node, so a
/// path is only built when an error needs one.
///
/// Lean on purpose: `init(from:)` reaches every field through the standard library's type-erased
/// container box, which copies our container for each call, so the keyed container holds this
/// one reference and nothing else, and the object's members are unpacked here once.
final class ValueDecoder: Decoder {
    let value: JSON
    /// The members when `value` is an object (empty otherwise).
    let members: Record
    let parent: ValueDecoder?
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSON, members: Record, parent: ValueDecoder?, key: (any CodingKey)?) {
        self.value = value
        self.members = members
        self.parent = parent
        self.key = key
    }

    convenience init(value: JSON, parent: ValueDecoder?, key: (any CodingKey)?) {
        if case .object(let members) = value {
            self.init(value: value, members: members, parent: parent, key: key)
        } else {
            self.init(value: value, members: [:], parent: parent, key: key)
        }
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

    // MARK: Errors (cold: built only when decoding fails)
    //
    // Out of line, and with the key as a plain generic parameter: in the unspecialized code
    // that every `init(from:)` reaches, a mention of `K?` makes the runtime look up the
    // metadata of `Optional<K>` (hoisted to the function's entry, so on the success path too),
    // which cost more than the rest of a field's decoding.

    @inline(never)
    func error<K: CodingKey>(_ reason: RecordCodingError.Reason, key: K) -> RecordCodingError {
        var keys = codingPath
        if K.self != NoKey.self { keys.append(key) }
        return RecordCodingError(path: keys.map { .init($0) }, reason: reason)
    }

    /// `json` (nil: absent) is not the `expected` JSON type: missing when absent or null, a
    /// mismatch otherwise.
    @inline(never)
    func mismatch<K: CodingKey>(_ expected: String, _ json: JSON?, key: K) -> RecordCodingError {
        guard let json, json != .null else { return error(.missing, key: key) }
        return error(.typeMismatch(expected: expected, found: json.typeName), key: key)
    }

    /// Why `json` is not an integer of type `I`.
    @inline(never)
    func notInteger<I, K: CodingKey>(_ json: JSON?, _ type: I.Type, key: K) -> RecordCodingError {
        guard case .number(let d)? = json else { return mismatch("a number", json, key: key) }
        return error(.invalidValue("\(d) is not an \(I.self) (it has a fraction or is out of range)"), key: key)
    }

    // MARK: Values

    @inline(__always)
    func bool<K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> Bool {
        if case .bool(let b)? = json { return b }
        throw mismatch("a bool", json, key: key)
    }

    @inline(__always)
    func string<K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> String {
        if case .string(let s)? = json { return s }
        throw mismatch("a string", json, key: key)
    }

    @inline(__always)
    func double<K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> Double {
        if case .number(let d)? = json { return d }
        throw mismatch("a number", json, key: key)
    }

    func float<K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> Float {
        let d = try double(json, key: key)
        let f = Float(d)
        if f.isFinite || !d.isFinite { return f }
        throw error(.invalidValue("\(d) does not fit a Float"), key: key)
    }

    @inline(__always)
    func int<K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> Int {
        if case .number(let d)? = json, let i = Int(exactly: d) { return i }
        throw notInteger(json, Int.self, key: key)
    }

    func integer<I: FixedWidthInteger, K: CodingKey>(_ json: JSON?, key: K) throws(RecordCodingError) -> I {
        if case .number(let d)? = json, let i = I(exactly: d) { return i }
        throw notInteger(json, I.self, key: key)
    }

    /// Any decodable value (nil: absent), with fast paths for the common leaf types.
    func unbox<T: Decodable, K: CodingKey>(_ json: JSON?, as type: T.Type, key: K) throws -> T {
        // Metatype comparisons are a few instructions; the conformance lookup below is not.
        // (`unsafeBitCast` to T, which is that type: `as! T` would be a dynamic cast.)
        if T.self == String.self { return unsafeBitCast(try string(json, key: key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try int(json, key: key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(json, key: key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(json, key: key), to: T.self) }
        guard let json else { throw error(.missing, key: key) }
        if let own = T.self as? any JSONRepresentable.Type {
            do { return try own.decoded(from: json, as: T.self) } catch { throw self.error(error, key: key) }
        }
        let child = ValueDecoder(value: json, parent: self, key: K.self == NoKey.self ? nil : key)
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
        guard case .object = value else { throw mismatch("an object", value, key: NoKey()) }
        return KeyedDecodingContainer(KeyedRecordDecoder<K>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch("an array", value, key: NoKey()) }
        return UnkeyedRecordDecoder(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleRecordDecoder(decoder: self) }
}

extension JSONRepresentable {
    /// The value read from `json` as `T`, which the caller found to be `Self` by a metatype
    /// cast: a bit cast, where `as! T` would be a second dynamic cast per value.
    static func decoded<T>(from json: JSON, as type: T.Type) throws(RecordCodingError.Reason) -> T {
        unsafeBitCast(try Self(jsonValue: json), to: T.self)
    }
}

struct KeyedRecordDecoder<K: CodingKey>: KeyedDecodingContainerProtocol {
    /// The only stored property (see ``ValueDecoder``).
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [K] { decoder.members.keys.compactMap { K(stringValue: $0.string) } }

    /// The member under `key`, nil when absent: one hash of the key's bytes and one probe.
    @inline(__always)
    func member(_ key: K) -> JSON? { decoder.members[FieldKey.field(key.stringValue)] }

    /// The member unless it is absent or null.
    @inline(__always)
    func present(_ key: K) -> JSON? {
        guard let v = member(key) else { return nil }
        if case .null = v { return nil }
        return v
    }

    func contains(_ key: K) -> Bool { member(key) != nil }

    func decodeNil(forKey key: K) throws -> Bool { present(key) == nil }

    func decode(_ t: Bool.Type, forKey key: K) throws -> Bool { try decoder.bool(member(key), key: key) }
    func decode(_ t: String.Type, forKey key: K) throws -> String { try decoder.string(member(key), key: key) }
    func decode(_ t: Double.Type, forKey key: K) throws -> Double { try decoder.double(member(key), key: key) }
    func decode(_ t: Float.Type, forKey key: K) throws -> Float { try decoder.float(member(key), key: key) }
    func decode(_ t: Int.Type, forKey key: K) throws -> Int { try decoder.int(member(key), key: key) }
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

    // The standard library's default `decodeIfPresent` asks `contains`, then `decodeNil`, then
    // `decode`: three lookups of the same member. These look it up once.
    func decodeIfPresent(_ t: Bool.Type, forKey key: K) throws -> Bool? {
        guard let v = present(key) else { return nil }
        return try decoder.bool(v, key: key)
    }
    func decodeIfPresent(_ t: String.Type, forKey key: K) throws -> String? {
        guard let v = present(key) else { return nil }
        return try decoder.string(v, key: key)
    }
    func decodeIfPresent(_ t: Double.Type, forKey key: K) throws -> Double? {
        guard let v = present(key) else { return nil }
        return try decoder.double(v, key: key)
    }
    func decodeIfPresent(_ t: Float.Type, forKey key: K) throws -> Float? {
        guard let v = present(key) else { return nil }
        return try decoder.float(v, key: key)
    }
    func decodeIfPresent(_ t: Int.Type, forKey key: K) throws -> Int? {
        guard let v = present(key) else { return nil }
        return try decoder.int(v, key: key)
    }
    func decodeIfPresent(_ t: Int8.Type, forKey key: K) throws -> Int8? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: Int16.Type, forKey key: K) throws -> Int16? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: Int32.Type, forKey key: K) throws -> Int32? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: Int64.Type, forKey key: K) throws -> Int64? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: UInt.Type, forKey key: K) throws -> UInt? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: UInt8.Type, forKey key: K) throws -> UInt8? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: UInt16.Type, forKey key: K) throws -> UInt16? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: UInt32.Type, forKey key: K) throws -> UInt32? { try integerIfPresent(key) }
    func decodeIfPresent(_ t: UInt64.Type, forKey key: K) throws -> UInt64? { try integerIfPresent(key) }
    func decodeIfPresent<T: Decodable>(_ t: T.Type, forKey key: K) throws -> T? {
        guard let v = present(key) else { return nil }
        return try decoder.unbox(v, as: t, key: key)
    }

    private func integerIfPresent<I: FixedWidthInteger>(_ key: K) throws(RecordCodingError) -> I? {
        guard let v = present(key) else { return nil }
        return try decoder.integer(v, key: key) as I
    }

    func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) throws -> KeyedDecodingContainer<NK> {
        guard let v = member(key) else { throw decoder.error(.missing, key: key) }
        return try ValueDecoder(value: v, parent: decoder, key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer {
        guard let v = member(key) else { throw decoder.error(.missing, key: key) }
        return try ValueDecoder(value: v, parent: decoder, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let k = RecordCodingKey.superKey
        return ValueDecoder(value: decoder.members[FieldKey.field(k.stringValue)] ?? .null, parent: decoder, key: k)
    }

    func superDecoder(forKey key: K) throws -> any Decoder {
        ValueDecoder(value: member(key) ?? .null, parent: decoder, key: key)
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

    /// The current element's key: an index whose name is made only when a path is built.
    private var key: IndexKey { IndexKey(currentIndex) }

    /// The current element, nil past the end (which each caller reports as missing).
    @inline(__always)
    private var current: JSON? { currentIndex < items.count ? items[currentIndex] : nil }

    /// `value`, after moving on: an element is consumed only when it decoded, as Foundation's
    /// decoder does, so a caller that catches the error can try another type.
    @inline(__always)
    private mutating func advance<R>(_ value: R) -> R {
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null? = current else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ t: Bool.Type) throws -> Bool { advance(try decoder.bool(current, key: key)) }
    mutating func decode(_ t: String.Type) throws -> String { advance(try decoder.string(current, key: key)) }
    mutating func decode(_ t: Double.Type) throws -> Double { advance(try decoder.double(current, key: key)) }
    mutating func decode(_ t: Float.Type) throws -> Float { advance(try decoder.float(current, key: key)) }
    mutating func decode(_ t: Int.Type) throws -> Int { advance(try decoder.int(current, key: key)) }
    mutating func decode(_ t: Int8.Type) throws -> Int8 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: Int16.Type) throws -> Int16 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: Int32.Type) throws -> Int32 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: Int64.Type) throws -> Int64 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: UInt.Type) throws -> UInt { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: UInt8.Type) throws -> UInt8 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: UInt16.Type) throws -> UInt16 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: UInt32.Type) throws -> UInt32 { advance(try decoder.integer(current, key: key)) }
    mutating func decode(_ t: UInt64.Type) throws -> UInt64 { advance(try decoder.integer(current, key: key)) }
    mutating func decode<T: Decodable>(_ t: T.Type) throws -> T { advance(try decoder.unbox(current, as: t, key: key)) }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type) throws -> KeyedDecodingContainer<NK> {
        guard let v = current else { throw decoder.error(.missing, key: key) }
        return advance(try ValueDecoder(value: v, parent: decoder, key: key).container(keyedBy: type))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let v = current else { throw decoder.error(.missing, key: key) }
        return advance(try ValueDecoder(value: v, parent: decoder, key: key).unkeyedContainer())
    }

    mutating func superDecoder() throws -> any Decoder {
        guard let v = current else { throw decoder.error(.missing, key: key) }
        return advance(ValueDecoder(value: v, parent: decoder, key: key))
    }
}

struct SingleRecordDecoder: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var value: JSON { decoder.value }
    private var none: NoKey { NoKey() }

    func decodeNil() -> Bool { if case .null = value { return true }; return false }
    func decode(_ t: Bool.Type) throws -> Bool { try decoder.bool(value, key: none) }
    func decode(_ t: String.Type) throws -> String { try decoder.string(value, key: none) }
    func decode(_ t: Double.Type) throws -> Double { try decoder.double(value, key: none) }
    func decode(_ t: Float.Type) throws -> Float { try decoder.float(value, key: none) }
    func decode(_ t: Int.Type) throws -> Int { try decoder.int(value, key: none) }
    func decode(_ t: Int8.Type) throws -> Int8 { try decoder.integer(value, key: none) }
    func decode(_ t: Int16.Type) throws -> Int16 { try decoder.integer(value, key: none) }
    func decode(_ t: Int32.Type) throws -> Int32 { try decoder.integer(value, key: none) }
    func decode(_ t: Int64.Type) throws -> Int64 { try decoder.integer(value, key: none) }
    func decode(_ t: UInt.Type) throws -> UInt { try decoder.integer(value, key: none) }
    func decode(_ t: UInt8.Type) throws -> UInt8 { try decoder.integer(value, key: none) }
    func decode(_ t: UInt16.Type) throws -> UInt16 { try decoder.integer(value, key: none) }
    func decode(_ t: UInt32.Type) throws -> UInt32 { try decoder.integer(value, key: none) }
    func decode(_ t: UInt64.Type) throws -> UInt64 { try decoder.integer(value, key: none) }
    func decode<T: Decodable>(_ t: T.Type) throws -> T { try decoder.unbox(value, as: t, key: none) }
}
