/// Counters by key path, retries by record, scans that keep going past a bad record, and
/// waits with `Duration`.
extension TypedCollection {
    /// Adds `delta` to one numeric top-level field of the record under `key`, named by its key
    /// path, without reading it: an `incr` op, so concurrent increments on other devices add up
    /// at the server instead of overwriting each other.
    ///
    /// ```swift
    /// try habits.incr("run", \.count, by: 1)
    /// ```
    ///
    /// - Throws: `.store(.misuse)` when `field` is not a top-level stored property of `Value`;
    ///   `.store(.invalid)` when the record's field is not a number (nothing changes).
    @discardableResult
    public func incr<Field: Numeric & Encodable>(_ key: Key, _ field: KeyPath<Value, Field>, by delta: Double,
                                                 dedupeKey: String? = nil, policy: FailurePolicy = .rollback) throws(CollectionError) -> MutationID {
        let fieldName = try self.fieldName(field)
        return try mutate([.incr(collection: name, key: key, field: Key(fieldName), delta: delta)], dedupeKey: dedupeKey, policy: policy)
    }

    /// Sends again every failed mutation (kept under `.keep`) that touches the record under
    /// `key`, and makes a backing-off one on it due at once: the "Retry" button beside a
    /// record shown as failed. Returns the ids retried, oldest first (empty: nothing to retry).
    @discardableResult
    public func retry(_ key: Key) throws(CollectionError) -> [MutationID] {
        try storeCall { () throws(OptimistError) -> [MutationID] in
            let layers = try store.explain(name, key).layers
            var retried: [MutationID] = []
            for layer in layers where layer.status == .failed || layer.status == .pending {
                do throws(OptimistError) { try store.retry(layer.id) } catch {
                    // Handed out meanwhile, or ended: nothing to retry there.
                    if case .state = error { continue }
                    if case .notFound = error { continue }
                    throw error
                }
                retried.append(layer.id)
            }
            return retried
        }
    }

    /// The visible values whose key starts with `prefix`, as ``scan(prefix:limit:)`` reads
    /// them, and the records that do not decode as `Value`, each with its error, instead of a
    /// throw at the first one: a list screen shows what it can (another app version's records,
    /// a hand-edited one) and reports the rest.
    ///
    /// ```swift
    /// let (rows, bad) = try habits.scanDecodable()
    /// for failure in bad { log("skipped \(failure.key): \(failure.error)") }
    /// ```
    public func scanDecodable(prefix: Key = "", limit: Int = 0) throws(CollectionError)
        -> (rows: [(key: Key, value: Value)], failures: [DecodeFailure]) {
        let records = try storeCall { () throws(OptimistError) in try store.scan(name, prefix: prefix, limit: limit) }
        var rows = [(key: Key, value: Value)]()
        var failures = [DecodeFailure]()
        rows.reserveCapacity(records.count)
        for r in records {
            do throws(CollectionError) { rows.append((r.key, try decode(r.value, r.key))) } catch {
                failures.append(DecodeFailure(key: r.key, error: error))
            }
        }
        return (rows, failures)
    }
}

extension Store {
    /// ``/OptimistCore/Store/waitSettled(_:timeoutMs:)`` with a `Duration`: the final status, or nil when
    /// `timeout` passes first.
    public func waitSettled(_ id: MutationID, timeout: Duration) throws(OptimistError) -> MutationStatus? {
        try waitSettled(id, timeoutMs: timeout.optimistMilliseconds)
    }

    /// ``/OptimistCore/Store/outboxWait(timeoutMs:)`` with a `Duration`.
    public func outboxWait(timeout: Duration) throws(OptimistError) -> Bool {
        try outboxWait(timeoutMs: timeout.optimistMilliseconds)
    }

    /// ``/OptimistSync/OptimistCore/Store/waitForSyncIdle(timeoutMs:)`` with a `Duration`,
    /// blocking the calling thread (``waitForSyncIdle(timeout:)`` is the async one).
    public func waitForSyncIdleBlocking(timeout: Duration) throws(OptimistError) -> Bool {
        try waitForSyncIdle(timeoutMs: timeout.optimistMilliseconds)
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, at least 0, at most `Int64.max` (the library's waits
    /// and ages take milliseconds).
    package var optimistMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max : ms + attoseconds / 1_000_000_000_000_000
    }
}
