/// Turns an app's `Encodable` value into a ``Record`` (or any ``JSON`` value), straight to the
/// engine's values: no JSON text in between, and no Foundation.
///
/// Numbers become JSON numbers (doubles): an integer beyond ±2^53 or a NaN/infinity is an
/// error rather than a silently different value. Optionals that are nil are left out of the
/// record (the synthesized `Codable` conformance asks for that), so a merge patch made from a
/// value never clears a field by accident. Types conforming to ``JSONRepresentable`` choose
/// their own form.
public struct RecordEncoder: Sendable {
    public init() {}

    /// The record `value` encodes to.
    ///
    /// - Throws: ``RecordCodingError`` naming the field at fault, or with
    ///   ``RecordCodingError/Reason/unencodable(_:)`` and an empty path when `value` does not
    ///   encode as an object (a record must be a struct or class with keyed fields).
    public func encode<T: Encodable>(_ value: T) throws(RecordCodingError) -> Record {
        let json = try encodeValue(value)
        guard case .object(let record) = json else {
            throw RecordCodingError(path: [], reason: .unencodable("\(T.self) encodes as \(json.typeName), a record must be an object"))
        }
        return record
    }

    /// The JSON value `value` encodes to (for a single field, e.g. a patch of one member).
    public func encodeValue<T: Encodable>(_ value: T) throws(RecordCodingError) -> JSON {
        let root = ValueEncoder(parent: nil, key: nil)
        do {
            return try root.box(value)
        } catch {
            throw recordCodingError(error, at: [])
        }
    }
}

/// Largest magnitude a double holds every integer up to.
let exactIntegerLimit = 9_007_199_254_740_992.0

/// The `Encoder` for one value. It is its own coding-path node (parent and key), so a path is
/// only built when an error needs one.
final class ValueEncoder: Encoder {
    let parent: ValueEncoder?
    let key: (any CodingKey)?
    /// What the value wrote: nothing yet, a finished value, or a container still being filled.
    var storage: Storage = .empty
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    enum Storage {
        case empty
        case value(JSON)
        case object(ObjectBox)
        case array(ArrayBox)
    }

    init(parent: ValueEncoder?, key: (any CodingKey)?) {
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var keys = [any CodingKey]()
        var node: ValueEncoder? = self
        while let n = node {
            if let k = n.key { keys.append(k) }
            node = n.parent
        }
        return keys.reversed()
    }

    func error(_ reason: RecordCodingError.Reason, key: (any CodingKey)? = nil) -> RecordCodingError {
        RecordCodingError(path: (codingPath + (key.map { [$0] } ?? [])).map { .init($0) }, reason: reason)
    }

    /// The finished value.
    func finish() -> JSON {
        switch storage {
        case .empty: .object([:])  // a type that encoded nothing at all: an empty object, as Foundation's encoder does
        case .value(let v): v
        case .object(let box): box.finish()
        case .array(let box): box.finish()
        }
    }

    // MARK: Values

    func number<N: BinaryInteger>(_ n: N, key: (any CodingKey)?) throws(RecordCodingError) -> JSON {
        // Within ±2^53 every integer is a double; beyond, a stored number could stand for its
        // neighbours too, so it is refused rather than rounded.
        guard let d = Double(exactly: n), abs(d) <= exactIntegerLimit else {
            throw error(.unencodable("\(n) is beyond ±2^53, where JSON numbers (doubles) lose integers"), key: key)
        }
        return .number(d)
    }

    func number(_ d: Double, key: (any CodingKey)?) throws(RecordCodingError) -> JSON {
        guard d.isFinite else { throw error(.unencodable("\(d) is not a finite number"), key: key) }
        return .number(d)
    }

    /// Any encodable value, with fast paths for the common leaf types (the standard library's
    /// collections reach their elements through the generic entry points).
    func box<T: Encodable>(_ value: T, key: (any CodingKey)? = nil) throws -> JSON {
        if T.self == String.self { return .string(value as! String) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Int.self { return try number(value as! Int, key: key) }
        if T.self == Double.self { return try number(value as! Double, key: key) }
        if let own = value as? any JSONRepresentable {
            do { return try own.jsonValue() } catch { throw self.error(error, key: key) }
        }
        let child = ValueEncoder(parent: self, key: key)
        do {
            try value.encode(to: child)
        } catch let e as RecordCodingError {
            throw e
        } catch {
            throw recordCodingError(error, at: child.codingPath)
        }
        return child.finish()
    }

    // MARK: Encoder

    func container<K: CodingKey>(keyedBy type: K.Type) -> KeyedEncodingContainer<K> {
        let box: ObjectBox
        if case .object(let b) = storage { box = b } else { box = ObjectBox(); storage = .object(box) }
        return KeyedEncodingContainer(KeyedRecordEncoder<K>(encoder: self, box: box))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let b) = storage { box = b } else { box = ArrayBox(); storage = .array(box) }
        return UnkeyedRecordEncoder(encoder: self, box: box)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleRecordEncoder(encoder: self) }
}

/// An object being filled. Members a nested container or super encoder still writes into are
/// resolved when the object is finished.
final class ObjectBox {
    var members = emptyRecordWithRoom
    var later: [(FieldKey, Deferred)] = []

    func finish() -> JSON {
        for (k, d) in later { members[k] = d.finish() }
        later.removeAll()
        return .object(members)
    }
}

/// An array being filled (see ``ObjectBox``).
final class ArrayBox {
    var items: [JSON] = []
    var later: [(Int, Deferred)] = []

    func finish() -> JSON {
        for (i, d) in later { items[i] = d.finish() }
        later.removeAll()
        return .array(items)
    }
}

/// A value written after its slot was taken: a nested container or a super encoder.
enum Deferred {
    case object(ObjectBox)
    case array(ArrayBox)
    case encoder(ValueEncoder)

    func finish() -> JSON {
        switch self {
        case .object(let b): b.finish()
        case .array(let b): b.finish()
        case .encoder(let e): e.finish()
        }
    }
}

struct KeyedRecordEncoder<K: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    let box: ObjectBox
    var codingPath: [any CodingKey] { encoder.codingPath }

    func put(_ v: JSON, _ key: K) { box.members[FieldKey(key.stringValue)] = v }

    mutating func encodeNil(forKey key: K) throws { put(.null, key) }
    mutating func encode(_ v: Bool, forKey key: K) throws { put(.bool(v), key) }
    mutating func encode(_ v: String, forKey key: K) throws { put(.string(v), key) }
    mutating func encode(_ v: Double, forKey key: K) throws { put(try encoder.number(v, key: key), key) }
    mutating func encode(_ v: Float, forKey key: K) throws { put(try encoder.number(Double(v), key: key), key) }
    mutating func encode(_ v: Int, forKey key: K) throws { put(try encoder.number(v, key: key), key) }
    mutating func encode(_ v: Int8, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int16, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int32, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: Int64, forKey key: K) throws { put(try encoder.number(v, key: key), key) }
    mutating func encode(_ v: UInt, forKey key: K) throws { put(try encoder.number(v, key: key), key) }
    mutating func encode(_ v: UInt8, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt16, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt32, forKey key: K) throws { put(.number(Double(v)), key) }
    mutating func encode(_ v: UInt64, forKey key: K) throws { put(try encoder.number(v, key: key), key) }
    mutating func encode<T: Encodable>(_ v: T, forKey key: K) throws { put(try encoder.box(v, key: key), key) }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) -> KeyedEncodingContainer<NK> {
        let child = ValueEncoder(parent: encoder, key: key)
        box.later.append((FieldKey(key.stringValue), .encoder(child)))
        return child.container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer(forKey key: K) -> any UnkeyedEncodingContainer {
        let child = ValueEncoder(parent: encoder, key: key)
        box.later.append((FieldKey(key.stringValue), .encoder(child)))
        return child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(key: RecordCodingKey.superKey) }
    mutating func superEncoder(forKey key: K) -> any Encoder { superEncoder(key: key) }

    private func superEncoder(key: any CodingKey) -> any Encoder {
        let child = ValueEncoder(parent: encoder, key: key)
        box.later.append((FieldKey(key.stringValue), .encoder(child)))
        return child
    }
}

struct UnkeyedRecordEncoder: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    let box: ArrayBox
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { box.items.count }
    private var nextKey: RecordCodingKey { RecordCodingKey(intValue: box.items.count) }

    mutating func encodeNil() throws { box.items.append(.null) }
    mutating func encode(_ v: Bool) throws { box.items.append(.bool(v)) }
    mutating func encode(_ v: String) throws { box.items.append(.string(v)) }
    mutating func encode(_ v: Double) throws { box.items.append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: Float) throws { box.items.append(try encoder.number(Double(v), key: nextKey)) }
    mutating func encode(_ v: Int) throws { box.items.append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: Int64) throws { box.items.append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: UInt) throws { box.items.append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: UInt64) throws { box.items.append(try encoder.number(v, key: nextKey)) }
    mutating func encode<T: Encodable>(_ v: T) throws { box.items.append(try encoder.box(v, key: nextKey)) }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type) -> KeyedEncodingContainer<NK> {
        let child = deferredChild()
        return child.container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { deferredChild().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { deferredChild() }

    /// A child encoder holding the next slot, filled when the array is finished.
    private func deferredChild() -> ValueEncoder {
        let child = ValueEncoder(parent: encoder, key: nextKey)
        box.later.append((box.items.count, .encoder(child)))
        box.items.append(.null)
        return child
    }
}

struct SingleRecordEncoder: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    func set(_ v: JSON) { encoder.storage = .value(v) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ v: Bool) throws { set(.bool(v)) }
    mutating func encode(_ v: String) throws { set(.string(v)) }
    mutating func encode(_ v: Double) throws { set(try encoder.number(v, key: nil)) }
    mutating func encode(_ v: Float) throws { set(try encoder.number(Double(v), key: nil)) }
    mutating func encode(_ v: Int) throws { set(try encoder.number(v, key: nil)) }
    mutating func encode(_ v: Int8) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int16) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int32) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int64) throws { set(try encoder.number(v, key: nil)) }
    mutating func encode(_ v: UInt) throws { set(try encoder.number(v, key: nil)) }
    mutating func encode(_ v: UInt8) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt16) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt32) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt64) throws { set(try encoder.number(v, key: nil)) }
    mutating func encode<T: Encodable>(_ v: T) throws { set(try encoder.box(v)) }
}
