import OptimistThreads
import Synchronization

/// Awaiting one mutation, and driving the outbox to your own backend, without polling.
extension Store {
    /// Waits until mutation `id` settles, without blocking the calling thread, and returns
    /// its final status: `.committed`, `.rolledBack`, or `.failed` (kept under `.keep`).
    ///
    /// ```swift
    /// let id = try store.mutate([.put(collection: "todos", key: "t1", value: ["title": "Milk"])])
    /// switch try await store.settled(id) {
    /// case .committed: break
    /// default: message = try store.mutation(id).lastError ?? "Not saved"
    /// }
    /// ```
    ///
    /// A cancelled task stops waiting (within a moment) and gets the status the mutation has
    /// then (`.pending` or `.inflight`).
    ///
    /// - Throws: `.notFound` for an unknown id; `.misuse` when the store is closed (also while
    ///   waiting).
    public func settled(_ id: MutationID) async throws(OptimistError) -> MutationStatus {
        let cancelled = Atomic<Bool>(false)
        return try await withTaskCancellationHandler {
            await onOwnThreadResult { () throws(OptimistError) -> MutationStatus in
                if let s = try self.waitSettled(id, timeoutMs: -1, stop: { cancelled.load(ordering: .acquiring) }) { return s }
                return try self.status(id)
            }
        } onCancel: {
            cancelled.store(true, ordering: .releasing)
            self.wakeWaiters()
        }.get()
    }

    /// The mutations to send, as they become due: each one the sequence yields is handed out
    /// (now `.inflight`, as ``/OptimistCore/Store/outboxNext(now:)`` does), for you to send to your own backend
    /// and then ``/OptimistCore/Store/commit(_:serverOps:)`` (or ``/OptimistCore/Store/commit(_:serverOps:renames:)`` when the backend
    /// gives its own keys), ``/OptimistCore/Store/fail(_:transient:reason:now:)`` or ``/OptimistCore/Store/rollback(_:reason:)``. It
    /// waits, without a thread of yours and without polling, while nothing is due: for a new
    /// mutation, a retry, or a backoff's end.
    ///
    /// ```swift
    /// Task {
    ///     for try await m in store.dueMutations() {
    ///         do {
    ///             let serverID = try await api.create(m.ops)      // your backend
    ///             try store.commit(m.id, renames: [KeyRename(collection: "todos", from: m.ops[0].key, to: Key(serverID))])
    ///         } catch {
    ///             try store.fail(m.id, transient: true, reason: "\(error)", now: monotonicMs())
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// The sequence ends when its task is cancelled or the store closes. `now` is the clock
    /// backoff times are on: pass the same one to `fail(now:)` (the default is the library's
    /// monotonic milliseconds, ``OptimistCore/Store/monotonicNow()``). One sender at a time: two sequences
    /// on one store split the outbox between them, out of order.
    ///
    /// - Throws: from the iteration, `.misuse` while a sync runs on the store (it sends the
    ///   outbox itself) or in a local-only store.
    public func dueMutations(now: @escaping @Sendable () -> Int64 = Store.monotonicNow) -> DueMutations {
        DueMutations(store: self, now: now)
    }

    /// The library's monotonic clock in milliseconds: what ``dueMutations(now:)`` reads by
    /// default, for the `now` of ``/OptimistCore/Store/fail(_:transient:reason:now:)``.
    @Sendable public static func monotonicNow() -> Int64 { monotonicMilliseconds() }
}

/// The due mutations of a store, handed out one by one as they become due (see
/// ``OptimistCore/Store/dueMutations(now:)``).
public struct DueMutations: AsyncSequence, Sendable {
    public typealias Element = MutationRecord
    public typealias Failure = OptimistError

    let store: Store
    let now: @Sendable () -> Int64

    public func makeAsyncIterator() -> Iterator { Iterator(store: store, now: now) }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = MutationRecord
        public typealias Failure = OptimistError

        let store: Store
        let now: @Sendable () -> Int64

        public mutating func next() async throws(OptimistError) -> MutationRecord? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(OptimistError) -> MutationRecord? {
            let store = self.store, now = self.now
            while !Task.isCancelled {
                if store.isClosed { return nil }
                // A backing-off mutation becomes due with no change to wake the wait: the
                // wait ends at the first one's time.
                let counts: OutboxCounts
                do throws(OptimistError) { counts = try store.outboxCounts() } catch {
                    if store.isClosed { return nil }
                    throw error
                }
                let timeout = counts.nextDueAt.map { Swift.max(0, $0 &- now()) } ?? -1
                let cancelled = Atomic<Bool>(false)
                let taken = await withTaskCancellationHandler {
                    await onOwnThreadResult { () throws(OptimistError) -> MutationRecord? in
                        try store.outboxTake(now: now, timeoutMs: timeout, stop: { cancelled.load(ordering: .acquiring) })
                    }
                } onCancel: {
                    cancelled.store(true, ordering: .releasing)
                    store.wakeWaiters()
                }
                switch taken {
                case .success(let m?): return m
                case .success(nil): continue
                case .failure(let error):
                    if store.isClosed { return nil }
                    throw error
                }
            }
            return nil
        }
    }
}
