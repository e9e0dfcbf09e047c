/// Why a record's visible value or pending flag changed.
public enum ChangeCause: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case mutate = 1, commit = 2, rollback = 3, server = 4, fail = 5, retry = 6
    /// A status change made by the sync that leaves values alone: a mutation handed to the
    /// server (inflight), or put back to pending because its request got no answer.
    case sync = 7

    /// The name every host uses: `mutate`, `commit`, `rollback`, `server`, `fail`, `retry`, `sync`.
    public var description: String {
        switch self {
        case .mutate: "mutate"
        case .commit: "commit"
        case .rollback: "rollback"
        case .server: "server"
        case .fail: "fail"
        case .retry: "retry"
        case .sync: "sync"
        }
    }
}

/// A record's status, as a UI shows it: what the not-yet-ended mutations on it say.
public enum RecordStatus: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Nothing pending touches it: it is what the server acknowledged.
    case confirmed = 0
    /// A pending or inflight mutation touches it (and no failed one).
    case pending = 1
    /// A failed mutation kept visible (policy `keep`) touches it: "failed — tap to retry".
    case failed = 2

    /// The name every host uses: `confirmed`, `pending`, `failed`.
    public var description: String {
        switch self {
        case .confirmed: "confirmed"
        case .pending: "pending"
        case .failed: "failed"
        }
    }
}

/// A record whose visible value or pending flag changed.
public struct Change: Sendable, Equatable {
    public var collection: Key
    public var key: Key
    /// The new visible value; `nil` when the record is gone.
    public var value: Record?
    /// Whether a not-yet-ended mutation still touches the record (`status != .confirmed`).
    public var pending: Bool { status != .confirmed }
    /// The record's status after the change.
    public var status: RecordStatus
    public var cause: ChangeCause

    public init(collection: Key, key: Key, value: Record?, status: RecordStatus, cause: ChangeCause) {
        self.collection = collection
        self.key = key
        self.value = value
        self.status = status
        self.cause = cause
    }

    /// A change whose record is pending or confirmed (never failed).
    public init(collection: Key, key: Key, value: Record?, pending: Bool, cause: ChangeCause) {
        self.init(collection: collection, key: key, value: value, status: pending ? .pending : .confirmed, cause: cause)
    }
}
