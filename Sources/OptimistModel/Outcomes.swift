/// What a server said of one pushed mutation.
public enum PushOutcome: Sendable, Equatable {
    /// Applied. `ops`: the server's canonical result (absolute ops) for the confirmed state;
    /// nil: fold the mutation's own ops. `renames`: records the server gave its own keys.
    case ok(ops: [Op]?, renames: [KeyRename] = [])
    /// Refused for good: the mutation's policy decides; `error` becomes its last error.
    case rejected(error: String)
    /// Refused for now: back to pending, due again after `afterMs` (nil: the retry policy's
    /// backoff); the attempt counts towards the retry limit.
    case retry(afterMs: Int64?, error: String?)
}

/// A record created under a temporary client key that the server stored under its own key.
public struct KeyRename: Sendable, Equatable {
    public var collection: Key
    public var from: Key
    public var to: Key

    public init(collection: Key, from: Key, to: Key) {
        self.collection = collection
        self.from = from
        self.to = to
    }
}

/// What a pull reports of a mutation this client sent but never heard back about.
public enum PulledOutcome: Sendable, Equatable {
    /// Applied: its effect is in the pulled changes.
    case ok
    /// Refused for good.
    case rejected(error: String)
}

/// A server's answer about one pushed mutation: which, and what it said.
public struct PushResult: Sendable, Equatable {
    public var id: MutationID
    public var outcome: PushOutcome

    public init(id: MutationID, outcome: PushOutcome) {
        self.id = id
        self.outcome = outcome
    }
}

/// What a pull says of one mutation this client sent without hearing back: which, what became
/// of it, and the retry count the server processed it at (nil: not said).
public struct PullOutcome: Sendable, Equatable {
    public var id: MutationID
    public var outcome: PulledOutcome
    public var retry: Int?

    public init(id: MutationID, outcome: PulledOutcome, retry: Int? = nil) {
        self.id = id
        self.outcome = outcome
        self.retry = retry
    }
}
