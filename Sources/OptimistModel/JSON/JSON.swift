/// A JSON value. Records are JSON objects (``Record``).
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([Key: JSON])

    /// The number, when this is one.
    public var number: Double? { if case .number(let d) = self { return d }; return nil }
    /// The string, when this is one.
    public var string: String? { if case .string(let s) = self { return s }; return nil }
    /// The object's members, when this is an object.
    public var object: [Key: JSON]? { if case .object(let o) = self { return o }; return nil }
}

/// A record: the JSON object stored under a key.
public typealias Record = [Key: JSON]

/// An empty record with room for 12 members, to start building a record from: its first
/// insert copies it, which allocates the storage without the runtime's generic-metadata
/// lookup that `Record(minimumCapacity:)` makes on every call (a noticeable share of building
/// a small record).
package let emptyRecordWithRoom = Record(minimumCapacity: 12)

/// The same with room for 6 members: what a record of unknown size (parsed, decoded) starts
/// from. Its table has 8 slots against 16, about half the bytes: pending records stay in
/// memory until the server confirms them, and a reopen with 100k pending allocates, touches
/// and at close frees all of them. A record of 7 to 12 members pays one rehash as it grows to
/// what ``emptyRecordWithRoom`` would have given it.
package let emptySmallRecord = Record(minimumCapacity: 6)

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (Key, JSON)...) {
        var o = [Key: JSON](minimumCapacity: elements.count)
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension JSON {
    /// RFC 7396 JSON merge patch of `patch` onto `target`.
    public static func mergePatch(_ target: JSON?, _ patch: JSON) -> JSON {
        guard case .object(let members) = patch else { return patch }
        var result: [Key: JSON]
        if case .object(let t)? = target { result = t } else { result = [:] }
        for (k, v) in members {
            if case .null = v {
                result.removeValue(forKey: k)
            } else {
                result[k] = mergePatch(result[k], v)
            }
        }
        return .object(result)
    }
}

extension Dictionary where Key == OptimistModel.Key, Value == JSON {
    /// True when `a` and `b` are the same dictionary (one storage, so equal), or both nil;
    /// false may still be equal. One comparison, for a check on every write: `==` compares
    /// members when the storages differ.
    @inlinable @inline(__always) package static func sameStorage(_ a: Record?, _ b: Record?) -> Bool {
        // An optional dictionary is one storage reference (nil: zero) on every platform
        // Swift runs on; anything else and the answer is "maybe not", which is always safe.
        guard MemoryLayout<Record?>.size == MemoryLayout<UInt>.size else { return false }
        return unsafeBitCast(a, to: UInt.self) == unsafeBitCast(b, to: UInt.self)
    }
}
