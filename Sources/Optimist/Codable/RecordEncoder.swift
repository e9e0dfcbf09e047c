/// Turns an app's `Encodable` value into a ``/OptimistModel/Record`` (or any ``/OptimistModel/JSON`` value), straight to the
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
        try encode(value, representsItself: T.self is any JSONRepresentable.Type)
    }

    /// ``encode(_:)`` for a caller that already knows whether `T` conforms to
    /// ``JSONRepresentable`` (see ``RecordDecoder/decode(_:from:representsItself:)``).
    package func encode<T: Encodable>(_ value: T, representsItself: Bool) throws(RecordCodingError) -> Record {
        let json: JSON
        if representsItself {
            json = try encodeValue(value)
        } else {
            let root = ValueEncoder(parent: nil, key: nil)
            do {
                try value.encode(to: root)
            } catch {
                throw recordCodingError(error, at: [])
            }
            json = root.finish()
        }
        guard case .object(let record) = json else {
            throw RecordCodingError(path: [], reason: .unencodable("\(T.self) encodes as \(json.typeName), a record must be an object"))
        }
        return record
    }

    /// The JSON value `value` encodes to (for a single field, e.g. a patch of one member).
    public func encodeValue<T: Encodable>(_ value: T) throws(RecordCodingError) -> JSON {
        let root = ValueEncoder(parent: nil, key: nil)
        do {
            return try root.box(value, key: NoKey())
        } catch {
            throw recordCodingError(error, at: [])
        }
    }
}

/// Largest magnitude a double holds every integer up to.
let exactIntegerLimit = 9_007_199_254_740_992.0

/// The `Encoder` for one value. It is its own coding-path node (parent and key), so a path is
/// only built when an error needs one.
///
/// It also holds what the value writes, so the containers the standard library boxes (and
/// copies for every field) carry this one reference and nothing else, and an object's members
/// go straight into the record that is returned.
final class ValueEncoder: Encoder {
    let parent: ValueEncoder?
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the value wrote: nothing yet, one value, an object or an array.
    var kind = Kind.empty
    var single = JSON.null
    var members = emptySmallRecord
    var items: [JSON] = []
    /// Slots a nested container or super encoder still writes into, filled by ``finish()``.
    var later: [(Slot, ValueEncoder)] = []

    enum Kind { case empty, value, object, array }
    enum Slot {
        case member(FieldKey)
        case index(Int)
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

    /// Cold, out of line, and with the key a plain generic parameter (no `K?`: see
    /// ``ValueDecoder/error(_:key:)``).
    @inline(never)
    func error<K: CodingKey>(_ reason: RecordCodingError.Reason, key: K) -> RecordCodingError {
        var keys = codingPath
        if K.self != NoKey.self { keys.append(key) }
        return RecordCodingError(path: keys.map { .init($0) }, reason: reason)
    }

    /// The finished value.
    func finish() -> JSON {
        for (slot, child) in later {
            switch slot {
            case .member(let k): members[k] = child.finish()
            case .index(let i): items[i] = child.finish()
            }
        }
        later.removeAll()
        switch kind {
        case .empty: return .object([:])  // a type that encoded nothing at all: an empty object, as Foundation's encoder does
        case .value: return single
        case .object: return .object(members)
        case .array: return .array(items)
        }
    }

    /// A child encoder for the value under `slot`, resolved when this one is finished.
    func deferred<K: CodingKey>(_ slot: Slot, key: K) -> ValueEncoder {
        let child = ValueEncoder(parent: self, key: key)
        later.append((slot, child))
        return child
    }

    // MARK: Values

    @inline(__always)
    func number<K: CodingKey>(_ n: Int, key: K) throws(RecordCodingError) -> JSON {
        // Within ±2^53 every integer is a double; beyond, a stored number could stand for its
        // neighbours too, so it is refused rather than rounded.
        guard n >= -9_007_199_254_740_992 && n <= 9_007_199_254_740_992 else { throw tooBig(n, key: key) }
        return .number(Double(n))
    }

    func number<N: BinaryInteger, K: CodingKey>(_ n: N, key: K) throws(RecordCodingError) -> JSON {
        guard let d = Double(exactly: n), abs(d) <= exactIntegerLimit else { throw tooBig(n, key: key) }
        return .number(d)
    }

    @inline(never)
    func tooBig<N: BinaryInteger, K: CodingKey>(_ n: N, key: K) -> RecordCodingError {
        error(.unencodable("\(n) is beyond ±2^53, where JSON numbers (doubles) lose integers"), key: key)
    }

    @inline(__always)
    func number<K: CodingKey>(_ d: Double, key: K) throws(RecordCodingError) -> JSON {
        if d.isFinite { return .number(d) }
        throw error(.unencodable("\(d) is not a finite number"), key: key)
    }

    /// Any encodable value, with fast paths for the common leaf types (the standard library's
    /// collections reach their elements through the generic entry points).
    func box<T: Encodable, K: CodingKey>(_ value: T, key: K) throws -> JSON {
        // Metatype comparisons are a few instructions; the conformance lookup below is not.
        // (`unsafeBitCast` from T, which is that type: `as!` would be a dynamic cast.)
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return try number(unsafeBitCast(value, to: Int.self), key: key) }
        if T.self == Double.self { return try number(unsafeBitCast(value, to: Double.self), key: key) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if let own = T.self as? any JSONRepresentable.Type {
            do { return try own.json(of: value) } catch { throw self.error(error, key: key) }
        }
        let child = ValueEncoder(parent: self, key: K.self == NoKey.self ? nil : key)
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
        kind = .object
        return KeyedEncodingContainer(KeyedRecordEncoder<K>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        kind = .array
        return UnkeyedRecordEncoder(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleRecordEncoder(encoder: self) }
}

extension JSONRepresentable {
    /// The JSON form of `value`, a `T` the caller found to be `Self` by a metatype cast: a bit
    /// cast, where `as?` on the value would be a second dynamic cast per value.
    static func json<T>(of value: T) throws(RecordCodingError.Reason) -> JSON {
        try unsafeBitCast(value, to: Self.self).jsonValue()
    }
}

struct KeyedRecordEncoder<K: CodingKey>: KeyedEncodingContainerProtocol {
    /// The only stored property (see ``ValueEncoder``).
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    @inline(__always)
    func put(_ v: JSON, _ key: K) { encoder.members[FieldKey.field(key.stringValue)] = v }

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

    // The standard library's default `encodeIfPresent` forwards to `encode` through one more
    // generic layer; an optional field is common enough to skip it.
    mutating func encodeIfPresent(_ v: Bool?, forKey key: K) throws { if let v { put(.bool(v), key) } }
    mutating func encodeIfPresent(_ v: String?, forKey key: K) throws { if let v { put(.string(v), key) } }
    mutating func encodeIfPresent(_ v: Double?, forKey key: K) throws { if let v { put(try encoder.number(v, key: key), key) } }
    mutating func encodeIfPresent(_ v: Int?, forKey key: K) throws { if let v { put(try encoder.number(v, key: key), key) } }
    mutating func encodeIfPresent<T: Encodable>(_ v: T?, forKey key: K) throws { if let v { put(try encoder.box(v, key: key), key) } }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type, forKey key: K) -> KeyedEncodingContainer<NK> {
        encoder.deferred(.member(FieldKey.field(key.stringValue)), key: key).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer(forKey key: K) -> any UnkeyedEncodingContainer {
        encoder.deferred(.member(FieldKey.field(key.stringValue)), key: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.deferred(.member(FieldKey.field(RecordCodingKey.superKey.stringValue)), key: RecordCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: K) -> any Encoder {
        encoder.deferred(.member(FieldKey.field(key.stringValue)), key: key)
    }
}

struct UnkeyedRecordEncoder: UnkeyedEncodingContainer {
    /// The only stored property (see ``ValueEncoder``).
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.items.count }
    /// The next element's key: an index whose name is made only when a path is built.
    private var nextKey: IndexKey { IndexKey(encoder.items.count) }

    @inline(__always)
    func append(_ v: JSON) { encoder.items.append(v) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ v: Bool) throws { append(.bool(v)) }
    mutating func encode(_ v: String) throws { append(.string(v)) }
    mutating func encode(_ v: Double) throws { append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: Float) throws { append(try encoder.number(Double(v), key: nextKey)) }
    mutating func encode(_ v: Int) throws { append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: Int8) throws { append(.number(Double(v))) }
    mutating func encode(_ v: Int16) throws { append(.number(Double(v))) }
    mutating func encode(_ v: Int32) throws { append(.number(Double(v))) }
    mutating func encode(_ v: Int64) throws { append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: UInt) throws { append(try encoder.number(v, key: nextKey)) }
    mutating func encode(_ v: UInt8) throws { append(.number(Double(v))) }
    mutating func encode(_ v: UInt16) throws { append(.number(Double(v))) }
    mutating func encode(_ v: UInt32) throws { append(.number(Double(v))) }
    mutating func encode(_ v: UInt64) throws { append(try encoder.number(v, key: nextKey)) }
    mutating func encode<T: Encodable>(_ v: T) throws { append(try encoder.box(v, key: nextKey)) }

    mutating func nestedContainer<NK: CodingKey>(keyedBy type: NK.Type) -> KeyedEncodingContainer<NK> {
        deferredChild().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { deferredChild().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { deferredChild() }

    /// A child encoder holding the next slot, filled when the array is finished.
    private func deferredChild() -> ValueEncoder {
        let index = encoder.items.count
        append(.null)
        return encoder.deferred(.index(index), key: IndexKey(index))
    }
}

struct SingleRecordEncoder: SingleValueEncodingContainer {
    /// The only stored property (see ``ValueEncoder``).
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var none: NoKey { NoKey() }

    func set(_ v: JSON) {
        encoder.kind = .value
        encoder.single = v
    }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ v: Bool) throws { set(.bool(v)) }
    mutating func encode(_ v: String) throws { set(.string(v)) }
    mutating func encode(_ v: Double) throws { set(try encoder.number(v, key: none)) }
    mutating func encode(_ v: Float) throws { set(try encoder.number(Double(v), key: none)) }
    mutating func encode(_ v: Int) throws { set(try encoder.number(v, key: none)) }
    mutating func encode(_ v: Int8) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int16) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int32) throws { set(.number(Double(v))) }
    mutating func encode(_ v: Int64) throws { set(try encoder.number(v, key: none)) }
    mutating func encode(_ v: UInt) throws { set(try encoder.number(v, key: none)) }
    mutating func encode(_ v: UInt8) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt16) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt32) throws { set(.number(Double(v))) }
    mutating func encode(_ v: UInt64) throws { set(try encoder.number(v, key: none)) }
    mutating func encode<T: Encodable>(_ v: T) throws { set(try encoder.box(v, key: none)) }
}
