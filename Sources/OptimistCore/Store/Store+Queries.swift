import OptimistModel

extension Store {
    /// Opens a live query: its rows are the query's result over the visible records now, and
    /// stay so after every call, kept current incrementally (a change to one record costs
    /// O(log n) per query it enters, leaves or moves in).
    ///
    /// ```swift
    /// let week = try store.query(QuerySpec(
    ///     collection: "logs", range: .between(from: "2026-11-20", to: "2026-11-27"),
    ///     predicate: .compare(FieldPath("habit"), .eq, "run"),
    ///     order: [QueryOrderItem(field: FieldPath("day"), descending: true)], limit: 50))
    /// for row in try week.rows() { print(row.json) }
    /// ```
    ///
    /// - Throws: `.misuse` when the store is closed.
    public func query(_ spec: QuerySpec) throws(OptimistError) -> LiveQuery {
        let id = try arrange { e throws(OptimistError) -> UInt64 in
            defer { e.storage.endCall() }
            return try e.openQuery(spec)
        }
        return LiveQuery(store: self, id: id, spec: spec)
    }

    /// Opens a live query from its JSON spec (the text every host uses).
    ///
    /// ```swift
    /// let today = try store.query(json: #"{"collection": "logs", "range": {"prefix": "2026-11-26"},"#
    ///     + #" "group": {"by": ["habit"], "aggregates": {"minutes": "sum:minutes"}}}"#)
    /// ```
    ///
    /// - Throws: `.invalid` for a spec that is not valid JSON or not a valid query (the
    ///   message names the offending member), `.misuse` when the store is closed.
    public func query(json text: String) throws(OptimistError) -> LiveQuery {
        try query(QuerySpec(parsing: text))
    }

    /// Defines an ordered secondary index on `field` of `collection`: a live query whose
    /// `where` narrows that field (`eq`, `in`, `lt`/`le`/`gt`/`ge` or `prefix` on it, alone, in
    /// an `and`, or in every item of an `or`) then reads its first rows through the index,
    /// O(log n + rows) records, instead of its collection's range. Idempotent.
    ///
    /// The index covers the confirmed records and is kept up to date on every change; a store
    /// file keeps it (defined once, it is there after every reopen, not rebuilt). Defining it
    /// reads the collection once (on a store file, where the records are, without loading
    /// them), and the store's calls wait meanwhile.
    ///
    /// ```swift
    /// try store.defineIndex(collection: "logs", field: FieldPath("habit"))
    /// let runs = try store.query(json: #"{"collection": "logs", "where": {"field": "habit", "eq": "run"}}"#)
    /// ```
    ///
    /// - Throws: `.invalid` for `$key` (records are kept in key order already) or a path with
    ///   an empty name; `.io` when the disk fails; `.misuse` when the store is closed.
    public func defineIndex(collection: Key, field: FieldPath) throws(OptimistError) {
        guard !field.isKey else {
            throw .invalid("field: \"$key\" needs no index (records are kept in key order; use \"range\")")
        }
        guard !field.names.isEmpty, !field.names.contains(where: { $0.string.isEmpty }) else {
            throw .invalid("field: must be a field path without empty names (got \"\(field.text)\")")
        }
        try arrange { e throws(OptimistError) in
            defer { e.storage.endCall() }
            try e.defineIndex(collection, field)
        }
    }

    /// The fields `collection` has an index on, in the order they were defined.
    public func indexedFields(collection: Key) throws(OptimistError) -> [FieldPath] {
        try read { e in e.storage.indexedFields(collection) }
    }

    func queryCount(_ id: UInt64) throws(OptimistError) -> Int {
        try read { e throws(OptimistError) in try e.liveQuery(id).count }
    }

    func queryRows(_ id: UInt64, offset: Int, limit: Int) throws(OptimistError) -> [QueryRow] {
        guard offset >= 0, limit >= 0 else { throw .misuse("offset and limit must not be negative") }
        return try read { e throws(OptimistError) in
            let q = try e.liveQuery(id)
            // Made when the query opened (collections are never removed); looked up, not
            // made, under a reader's lock.
            guard let c = e.collections[q.spec.collection] else { return [] }
            return q.rows(offset: offset, count: limit, read: { e.queryRow(c, $0) })
        }
    }

    /// Subscribes; with `reading`, also reads the rows in the same step under both locks, so
    /// that no call falls between the rows and the first deltas (without it, no rows). Returns
    /// the number of the query's last delivery before the subscription: the listener's first
    /// is numbered above it.
    func querySubscribe(_ id: UInt64, reading: Bool, _ listener: @escaping @Sendable (UInt64, [QueryDelta]) -> Void)
        throws(OptimistError) -> (rows: [QueryRow], subscription: UInt64, delivered: UInt64) {
        try arrange { e throws(OptimistError) in
            defer { if reading { e.storage.endCall() } }
            let q = try e.liveQuery(id)
            let sub = e.nextSubscription
            e.nextSubscription += 1
            q.listeners[sub] = listener
            guard reading, let c = e.collections[q.spec.collection] else { return ([], sub, q.delivered) }
            return (q.rows(offset: 0, count: 0, read: { e.queryRow(c, $0) }), sub, q.delivered)
        }
    }

    func queryUnsubscribe(_ id: UInt64, _ sub: UInt64) throws(OptimistError) {
        try arrange { e throws(OptimistError) in
            guard try e.liveQuery(id).listeners.removeValue(forKey: sub) != nil else {
                throw .notFound("no subscription \(sub) on this query")
            }
        }
    }

    func queryClose(_ id: UInt64) {
        _ = try? arrange { e in e.closeQuery(id) }
    }
}

/// A live query of a ``Store``: its rows, kept equal to the query's result over the visible
/// records after every call, and listeners that hear each call's changes as deltas.
///
/// Rows are read with ``rows(offset:limit:)``; a listener added with ``subscribe(_:)`` gets,
/// once per call that changed the rows, the deltas that turn the rows before the call into
/// the rows after it (on the calling thread, after the change is visible, outside the store's
/// locks, in call order, as the store's own listeners). Closing the query, or its store,
/// ends it: its calls then throw `.misuse`.
public final class LiveQuery: Sendable {
    public let spec: QuerySpec
    let id: UInt64
    private let store: Store

    init(store: Store, id: UInt64, spec: QuerySpec) {
        self.store = store
        self.id = id
        self.spec = spec
    }

    /// The number of rows (records, or groups; at most the spec's limit).
    public func count() throws(OptimistError) -> Int { try store.queryCount(id) }

    /// The rows at `offset` on, at most `limit` of them (0: all).
    ///
    /// ```swift
    /// let firstTen = try query.rows(limit: 10)
    /// ```
    public func rows(offset: Int = 0, limit: Int = 0) throws(OptimistError) -> [QueryRow] {
        try store.queryRows(id, offset: offset, limit: limit)
    }

    /// Calls `listener` with the deltas of every call that changes the rows; no first call
    /// (read the rows first). Returns the subscription's id for ``unsubscribe(_:)``.
    ///
    /// ```swift
    /// var mirror = try query.rows()
    /// try query.subscribe { deltas in QueryDelta.apply(deltas, to: &mirror) }
    /// ```
    @discardableResult
    public func subscribe(_ listener: @escaping @Sendable ([QueryDelta]) -> Void) throws(OptimistError) -> UInt64 {
        try store.querySubscribe(id, reading: false) { _, deltas in listener(deltas) }.subscription
    }

    /// ``subscribe(_:)`` with each call's number among the query's deliveries (1, 2, ...):
    /// listeners run on each call's own thread, so calls made on two threads at once may
    /// deliver in either order; the numbers tell the order their deltas apply in (a mirror of
    /// the rows keeps early ones until the ones before them have come, as the Swift API's
    /// typed results do).
    ///
    /// ```swift
    /// let (rows, _, last) = try query.rowsAndSubscribeNumbered { number, deltas in
    ///     mirror.take(number, deltas)   // applies number last + 1, then the next, ...
    /// }
    /// ```
    @discardableResult
    public func subscribeNumbered(_ listener: @escaping @Sendable (UInt64, [QueryDelta]) -> Void) throws(OptimistError) -> UInt64 {
        try store.querySubscribe(id, reading: false, listener).subscription
    }

    /// ``subscribeNumbered(_:)``, and the number of the query's last delivery before the
    /// subscription: the listener's deliveries are numbered from that plus one, with no gap
    /// (what a host needs to put them back in order without reading the rows).
    package func subscribeNumberedAfter(_ listener: @escaping @Sendable (UInt64, [QueryDelta]) -> Void) throws(OptimistError)
        -> (subscription: UInt64, delivered: UInt64) {
        let r = try store.querySubscribe(id, reading: false, listener)
        return (r.subscription, r.delivered)
    }

    /// The rows and a subscription made in one step: the deltas `listener` gets apply to
    /// exactly these rows (no change falls between reading them and subscribing).
    ///
    /// ```swift
    /// let (rows, _) = try query.rowsAndSubscribe { deltas in screen.apply(deltas) }
    /// screen.show(rows)
    /// ```
    public func rowsAndSubscribe(_ listener: @escaping @Sendable ([QueryDelta]) -> Void) throws(OptimistError)
        -> (rows: [QueryRow], subscription: UInt64) {
        let r = try store.querySubscribe(id, reading: true) { _, deltas in listener(deltas) }
        return (r.rows, r.subscription)
    }

    /// ``rowsAndSubscribe(_:)`` with numbered deliveries (``subscribeNumbered(_:)``), and the
    /// number of the last delivery the rows include: the next one the listener gets that
    /// applies to them is that plus one.
    public func rowsAndSubscribeNumbered(_ listener: @escaping @Sendable (UInt64, [QueryDelta]) -> Void) throws(OptimistError)
        -> (rows: [QueryRow], subscription: UInt64, delivered: UInt64) {
        try store.querySubscribe(id, reading: true, listener)
    }

    /// - Throws: `.notFound` for a subscription this query does not have.
    public func unsubscribe(_ subscription: UInt64) throws(OptimistError) {
        try store.queryUnsubscribe(id, subscription)
    }

    /// Each call's deltas as an async sequence; its subscription ends when the consumer stops.
    public func deltas() throws(OptimistError) -> AsyncStream<[QueryDelta]> {
        let (stream, continuation) = AsyncStream<[QueryDelta]>.makeStream()
        let sub = try subscribe { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in try? self?.unsubscribe(sub) }
        return stream
    }

    /// Stops following the store; later calls throw `.misuse`. Closing twice is a no-op.
    public func close() { store.queryClose(id) }
}
