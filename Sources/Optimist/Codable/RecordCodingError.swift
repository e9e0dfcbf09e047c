/// Why a Swift value did not become a record, or a stored record did not become a Swift value.
///
/// It names where: the collection and key (filled in by the typed collection that read or
/// wrote the record; nil when the coder was used on its own) and the coding path, the fields
/// and array indexes from the record down to the value at fault.
public struct RecordCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong at ``path``.
    public enum Reason: Error, Sendable, Equatable {
        /// The stored JSON is of another type than the Swift value wants, e.g. expected
        /// `"a number"`, found `"a string"`.
        case typeMismatch(expected: String, found: String)
        /// A non-optional value is absent or null.
        case missing
        /// The JSON type is right but the value is not: an integer out of range or with a
        /// fraction, a malformed date, an enum's unknown case, or a type's own decoding error.
        case invalidValue(String)
        /// The Swift value has no faithful JSON form: a NaN or infinite number, an integer
        /// beyond ±2^53 (JSON numbers are doubles), or a record that is not an object.
        case unencodable(String)
    }

    /// One step of a coding path.
    public enum PathComponent: Sendable, Hashable, CustomStringConvertible {
        /// A member of an object (a stored property's coding key).
        case field(String)
        /// An element of an array.
        case index(Int)

        public var description: String {
            switch self {
            case .field(let name): name
            case .index(let i): "[\(i)]"
            }
        }
    }

    /// The collection of the record (nil when the coder was used alone).
    public var collection: Key?
    /// The record's key (nil when the coder was used alone).
    public var key: Key?
    /// From the record down to the value at fault; empty: the record itself.
    public var path: [PathComponent]
    public var reason: Reason

    public init(collection: Key? = nil, key: Key? = nil, path: [PathComponent], reason: Reason) {
        self.collection = collection
        self.key = key
        self.path = path
        self.reason = reason
    }

    /// The path as one would write it in Swift: `entries[2].minutes`; empty for the record.
    public var fieldPath: String {
        var out = ""
        for c in path {
            if case .field = c, !out.isEmpty { out += "." }
            out += c.description
        }
        return out
    }

    /// E.g. `logs/2026-11-22/run, field minutes: expected a number, found a string`.
    public var description: String {
        var place = ""
        if let collection { place = collection.string }
        if let key { place += (place.isEmpty ? "" : "/") + key.string }
        let field = path.isEmpty ? "the record" : "field \(fieldPath)"
        place = place.isEmpty ? field : "\(place), \(field)"
        switch reason {
        case .typeMismatch(let expected, let found): return "\(place): expected \(expected), found \(found)"
        case .missing: return "\(place): missing (the Swift type does not allow nil)"
        case .invalidValue(let why): return "\(place): \(why)"
        case .unencodable(let why): return "\(place): cannot be stored: \(why)"
        }
    }

    /// The same error placed at a record.
    public func at(collection: Key, key: Key) -> RecordCodingError {
        var e = self
        e.collection = collection
        e.key = key
        return e
    }
}

extension RecordCodingError.PathComponent {
    /// The component a `CodingKey` stands for (an index when the key has an int value and
    /// no name of its own, as unkeyed containers' keys do).
    init(_ key: any CodingKey) {
        if let i = key.intValue, key.stringValue == "Index \(i)" || key.stringValue.isEmpty {
            self = .index(i)
        } else {
            self = .field(key.stringValue)
        }
    }
}

extension JSON {
    /// The JSON type as an error message names it.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a bool"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A coding key of our own: an array index (named like the standard library's unkeyed keys,
/// so ``RecordCodingError/PathComponent`` shows it as one) or a field name.
struct RecordCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init(intValue: Int) { self.stringValue = "Index \(intValue)"; self.intValue = intValue }
    /// `super`, as Foundation's coders name the key of superEncoder()/superDecoder().
    static let superKey = RecordCodingKey(stringValue: "super")
}

/// No key: what the coder passes for a value's own (single-value) container and the root,
/// where a path gets no component. A type of its own rather than an optional key, see
/// ``ValueDecoder/error(_:key:)``.
struct NoKey: CodingKey {
    init() {}
    init?(intValue: Int) { nil }
    init?(stringValue: String) { nil }
    var intValue: Int? { nil }
    var stringValue: String { "" }
}

/// An array element's coding key. Unkeyed containers make one per element, and the name
/// ("Index 3", as the standard library's unkeyed keys are named) is a string built from the
/// number, so it is made only when asked for: when an error's path is built.
struct IndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(intValue: Int) { index = intValue }
    init?(stringValue: String) { nil }
    var intValue: Int? { index }
    var stringValue: String { "Index \(index)" }
}

/// Converts what an `init(from:)` or `encode(to:)` threw into our error: ours pass through;
/// the standard library's `DecodingError`/`EncodingError` keep their path and message;
/// anything else is an invalid value at `path`.
func recordCodingError(_ error: any Error, at path: @autoclosure () -> [any CodingKey]) -> RecordCodingError {
    if let e = error as? RecordCodingError { return e }
    func components(_ keys: [any CodingKey]) -> [RecordCodingError.PathComponent] { keys.map { .init($0) } }
    if let e = error as? DecodingError {
        switch e {
        case .typeMismatch(let type, let c):
            return RecordCodingError(path: components(c.codingPath), reason: .typeMismatch(expected: "\(type)", found: c.debugDescription))
        case .valueNotFound(_, let c):
            return RecordCodingError(path: components(c.codingPath), reason: .missing)
        case .keyNotFound(let key, let c):
            return RecordCodingError(path: components(c.codingPath + [key]), reason: .missing)
        case .dataCorrupted(let c):
            return RecordCodingError(path: components(c.codingPath), reason: .invalidValue(c.debugDescription))
        @unknown default:
            return RecordCodingError(path: components(path()), reason: .invalidValue("\(e)"))
        }
    }
    if let e = error as? EncodingError, case .invalidValue(_, let c) = e {
        return RecordCodingError(path: components(c.codingPath), reason: .unencodable(c.debugDescription))
    }
    return RecordCodingError(path: components(path()), reason: .invalidValue("\(error)"))
}

/// ``/OptimistModel/Key`` under a name the coding containers can use: inside them `Key` is the container's
/// own coding-key type.
typealias FieldKey = Key
