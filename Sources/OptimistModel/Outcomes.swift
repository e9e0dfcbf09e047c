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

extension KeyRename {
    /// Renames in their JSON form, `[{"coll": C, "from": TEMP_KEY, "to": REAL_KEY}, ...]` (nil
    /// or null: none): a push's `ok` result carries them so, and the C and Python commits take
    /// them so.
    ///
    /// - Throws: `.invalid` naming what is wrong: not an array, a member without string
    ///   `coll`, `from` and `to`, an empty new key, or a new key over `Limits.maxNameBytes` (it
    ///   rewrites pending ops, which must stay within the limits a server checks).
    public static func list(from j: JSON?) throws(OptimistError) -> [KeyRename] {
        switch j {
        case nil, .null?: return []
        case .array(let list)?:
            return try list.map { (item) throws(OptimistError) -> KeyRename in
                guard case .object(let r) = item, case .string(let c)? = r["coll"], case .string(let from)? = r["from"],
                      case .string(let to)? = r["to"], !to.isEmpty else {
                    throw .invalid("a rename needs string coll, from and to (a non-empty to)")
                }
                guard to.utf8.count <= Limits.maxNameBytes else {
                    throw .invalid("a rename's new key has \(to.utf8.count) bytes, over the limit of \(Limits.maxNameBytes) bytes for a key")
                }
                return KeyRename(collection: Key(c), from: Key(from), to: Key(to))
            }
        default: throw .invalid("renames must be an array")
        }
    }
}
