/// What a call on a ``TypedCollection`` can fail with: the store's own error, or a value and
/// a record that do not fit each other.
public enum CollectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store refused the call (closed store, I/O, a duplicate dedupe key, a key path that
    /// names no stored field, …).
    case store(OptimistError)
    /// A stored record does not decode as the collection's type, or a value does not encode;
    /// the error names the collection, key and field.
    case coding(RecordCodingError)

    public var description: String {
        switch self {
        case .store(let e): e.description
        case .coding(let e): e.description
        }
    }
}
