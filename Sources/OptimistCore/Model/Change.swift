/// Why a record's visible value or pending flag changed.
public enum ChangeCause: Int32, Sendable, CustomStringConvertible {
    case mutate = 1, commit = 2, rollback = 3, server = 4, fail = 5, retry = 6

    /// The name every host uses: `mutate`, `commit`, `rollback`, `server`, `fail`, `retry`.
    public var description: String {
        switch self {
        case .mutate: "mutate"
        case .commit: "commit"
        case .rollback: "rollback"
        case .server: "server"
        case .fail: "fail"
        case .retry: "retry"
        }
    }
}

/// A record whose visible value or pending flag changed.
public struct Change: Sendable, Equatable {
    public var collection: Key
    public var key: Key
    /// The new visible value; `nil` when the record is gone.
    public var value: Record?
    /// Whether a not-yet-ended mutation still touches the record.
    public var pending: Bool
    public var cause: ChangeCause

    public init(collection: Key, key: Key, value: Record?, pending: Bool, cause: ChangeCause) {
        self.collection = collection
        self.key = key
        self.value = value
        self.pending = pending
        self.cause = cause
    }
}

/// What changed in a store, in order, for a persistence layer: confirmed records, live
/// mutations (written whole on every change), ended mutations and loaded ranges.
public enum JournalEntry: Sendable {
    case confirmed(collection: Key, key: Key, value: Record?)
    case mutation(MutationRecord)
    case ended(id: MutationID, status: MutationStatus)
    case loaded(collection: Key, from: Key, to: Key, at: Int64)
}
