/// A store-assigned mutation id: increasing, never reused in a store's life.
public typealias MutationID = UInt64

/// The largest id a store hands out. Ids travel as JSON numbers (the sync's pushes, the
/// outbox, `explain`), which carry integers exactly only up to 2^53 - 1. A store making a
/// million mutations a second would reach it after 285 years, so a store file that names a
/// larger id is damaged.
package let largestMutationID: MutationID = (1 << 53) - 1

/// Where a mutation is in its life.
public enum MutationStatus: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Applied, not yet handed to the sender.
    case pending = 1
    /// Handed to the sender by `outboxNext`.
    case inflight = 2
    /// Kept visible after a permanent failure (policy `keep`); waits for `retry` or `rollback`.
    case failed = 3
    case committed = 4
    case rolledBack = 5

    /// The name every host uses: `pending`, `inflight`, `failed`, `committed`, `rolled_back`.
    public var description: String {
        switch self {
        case .pending: "pending"
        case .inflight: "inflight"
        case .failed: "failed"
        case .committed: "committed"
        case .rolledBack: "rolled_back"
        }
    }

    /// Whether the mutation has ended: committed or rolled back. A mutation that has not yet
    /// ended (pending, inflight or failed) still counts towards the visible state.
    public var isEnded: Bool { self == .committed || self == .rolledBack }

    /// The old name of `!isEnded`: "live" was the engine's word for "not yet ended".
    @available(*, deprecated, message: "use !isEnded (a mutation that has not yet ended)")
    public var isLive: Bool { !isEnded }
}

/// A mutation that has ended and how (a store snapshot's, or a store file's ended chunk's).
package struct EndedMutation: Sendable {
    package var id: MutationID
    package var status: MutationStatus

    package init(id: MutationID, status: MutationStatus) {
        self.id = id
        self.status = status
    }
}

/// What happens to a mutation that fails for good (permanently, or out of retries).
public enum FailurePolicy: Int32, Sendable {
    /// Roll it back (the default).
    case rollback = 0
    /// Keep it visible with status `failed` until `retry` or `rollback`.
    case keep = 1
}

/// How transient failures are retried: exponential backoff with jitter.
public struct RetryPolicy: Sendable, Equatable {
    /// Sends a mutation may have before a transient failure counts as final.
    public var maxAttempts: Int
    /// The delay after the first failure, in milliseconds; it doubles per attempt.
    public var baseDelayMs: Int64
    /// The cap on the delay, in milliseconds.
    public var maxDelayMs: Int64

    public init(maxAttempts: Int = 5, baseDelayMs: Int64 = 1_000, maxDelayMs: Int64 = 60_000) {
        self.maxAttempts = maxAttempts
        self.baseDelayMs = baseDelayMs
        self.maxDelayMs = maxDelayMs
    }

    /// The full (un-jittered) delay after `attempts` sends.
    public func delay(afterAttempts attempts: Int) -> Int64 {
        let shift = min(max(attempts - 1, 0), 40)
        let base = max(baseDelayMs, 0), cap = max(maxDelayMs, 0)
        let d = base.multipliedReportingOverflow(by: Int64(1) << shift)
        return d.overflow ? cap : min(d.partialValue, cap)
    }
}

/// Everything the store keeps about a not-yet-ended mutation: what a persistence layer writes
/// and restores.
public struct MutationRecord: Sendable, Equatable {
    public var id: MutationID
    public var ops: [Op]
    public var status: MutationStatus
    /// Sends so far (each `outboxNext` that handed it out).
    public var attempts: Int
    /// Not due before this time (ms, the caller's clock).
    public var nextAttemptAt: Int64
    public var dedupeKey: String?
    public var policy: FailurePolicy
    /// The reason given with the last failure (the server's error, or rollback's reason).
    public var lastError: String?
    /// How often the app retried it after a permanent failure (`Store.retry(_:)` of a failed
    /// mutation): sent on the wire, so a server processes a rejected mutation again only
    /// when this is higher than the count it recorded.
    public var retry: Int
    /// Its place in the send queue: its id, until a retry of a failed mutation puts it after
    /// everything already queued (a fresh position taken from the id sequence).
    public var queuePosition: UInt64

    public init(id: MutationID, ops: [Op], status: MutationStatus = .pending, attempts: Int = 0,
                nextAttemptAt: Int64 = 0, dedupeKey: String? = nil, policy: FailurePolicy = .rollback,
                lastError: String? = nil, retry: Int = 0, queuePosition: UInt64? = nil) {
        self.id = id
        self.ops = ops
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.dedupeKey = dedupeKey
        self.policy = policy
        self.lastError = lastError
        self.retry = retry
        self.queuePosition = queuePosition ?? id
    }
}
