import Observation
import Synchronization

/// One row of a typed live query: a record decoded as the collection's type, its key and its
/// status. `Identifiable` by key, so a SwiftUI `List` or `ForEach` takes the rows as they are.
public struct TypedRow<Value: Codable & Sendable>: Identifiable, Sendable {
    public let key: Key
    public let value: Value
    /// `confirmed`, `pending` or `failed`: the badge to show.
    public let status: RecordStatus
    public var id: Key { key }
}

extension TypedRow: Equatable where Value: Equatable {}

/// A record of a typed live query's result that does not decode as the collection's type: it
/// is left out of the rows (the query goes on), and listed here until it decodes or leaves.
public struct DecodeFailure: Sendable, Equatable {
    public let key: Key
    public let error: CollectionError
}

/// A live query on a ``TypedCollection``, built with key paths (no JSON): filters, order,
/// limit and a key range. ``live()`` opens it as ``LiveResults``.
///
/// ```swift
/// let week = try logs.query()
///     .keys(from: "2026-11-20", to: "2026-11-27")
///     .filter(\.habit, .eq, "run")
///     .sorted(by: \.day, descending: true)
///     .limit(50)
///     .live()
/// for row in week.rows { print(row.key, row.value.minutes, row.status) }
/// ```
///
/// Key paths name top-level stored fields (found as ``TypedCollection/fieldName(_:)`` finds
/// them); for a nested field or one the probe cannot find, use the methods taking a
/// `FieldPath`.
public struct TypedQuery<Value: Codable & Sendable>: Sendable {
    public let collection: TypedCollection<Value>
    private var range: QueryRange?
    private var conditions: [QueryPredicate] = []
    private var order: [QueryOrderItem] = []
    private var count: Int?

    init(collection: TypedCollection<Value>) { self.collection = collection }

    /// Only records whose field at `keyPath` compares to `value` as `op` says (`eq`, `ne`,
    /// `lt`, `le`, `gt`, `ge`; see the query docs for how values of different kinds compare).
    public func filter<Field: Encodable>(_ keyPath: KeyPath<Value, Field>, _ op: QueryPredicate.Comparison,
                                         _ value: Field) throws(CollectionError) -> Self {
        try filter(path(keyPath), op, encoded(value))
    }

    /// Only records whose field at `keyPath` equals one of `values`.
    public func filter<Field: Encodable>(_ keyPath: KeyPath<Value, Field>, in values: [Field]) throws(CollectionError) -> Self {
        var json = [JSON]()
        for v in values { json.append(try encoded(v)) }
        var q = self
        q.conditions.append(.isIn(try path(keyPath), json))
        return q
    }

    /// Only records whose field at `path` compares to `value` as `op` says.
    public func filter(_ path: FieldPath, _ op: QueryPredicate.Comparison, _ value: JSON) -> Self {
        self.where(.compare(path, op, value))
    }

    /// Only records that pass `predicate` (any `QueryPredicate`: `and`, `or`, `not`, `prefix`,
    /// `exists`, ...); several conditions must all hold.
    public func `where`(_ predicate: QueryPredicate) -> Self {
        var q = self
        q.conditions.append(predicate)
        return q
    }

    /// Only records of this status ("my failed messages": `.failed`).
    public func status(_ status: RecordStatus) -> Self { self.where(.status(status)) }

    /// Ordered by the field at `keyPath` (then by the next `sorted` call's field, then by key).
    public func sorted<Field: Encodable>(by keyPath: KeyPath<Value, Field>, descending: Bool = false) throws(CollectionError) -> Self {
        sorted(by: try path(keyPath), descending: descending)
    }

    /// Ordered by the field at `path`.
    public func sorted(by path: FieldPath, descending: Bool = false) -> Self {
        var q = self
        q.order.append(QueryOrderItem(field: path, descending: descending))
        return q
    }

    /// At most `n` rows: the first `n` of the ordered result at every moment.
    public func limit(_ n: Int) -> Self {
        var q = self
        q.count = n
        return q
    }

    /// Only keys starting with `prefix`.
    public func keys(prefix: Key) -> Self {
        var q = self
        q.range = .prefix(prefix)
        return q
    }

    /// Only keys from `from` (inclusive) to `to` (exclusive), bytewise; either may be nil.
    public func keys(from: Key?, to: Key?) -> Self {
        var q = self
        q.range = .between(from: from, to: to)
        return q
    }

    /// The spec this builds (what every host would write as JSON: `QuerySpec.json`).
    ///
    /// - Throws: `.store(.invalid)` for a limit below 1.
    public func spec() throws(CollectionError) -> QuerySpec {
        let predicate: QueryPredicate? = conditions.isEmpty ? nil : conditions.count == 1 ? conditions[0] : .and(conditions)
        return try storeCall { () throws(OptimistError) in
            try QuerySpec(collection: collection.name, range: range, predicate: predicate, order: order, limit: count)
        }
    }

    /// Opens the query: its rows exist at once and stay current.
    public func live() throws(CollectionError) -> LiveResults<Value> {
        try LiveResults(collection: collection, spec: spec())
    }

    /// The field `keyPath` reads, as a path (its stored name).
    private func path<Field: Encodable>(_ keyPath: KeyPath<Value, Field>) throws(CollectionError) -> FieldPath {
        FieldPath(names: [Key(try collection.fieldName(keyPath))])
    }

    private func encoded<Field: Encodable>(_ value: Field) throws(CollectionError) -> JSON {
        do { return try RecordEncoder().encodeValue(value) } catch {
            throw .coding(error.at(collection: collection.name, key: ""))
        }
    }
}

extension TypedCollection {
    /// A live query on this collection, to narrow with ``TypedQuery``'s methods and open with
    /// ``TypedQuery/live()``.
    ///
    /// ```swift
    /// let failed = try messages.query().status(.failed).sorted(by: \.sentAt).live()
    /// ```
    public func query() -> TypedQuery<Value> { TypedQuery(collection: self) }
}

/// The rows of a typed live query, kept current: decoded values, keys and statuses, in the
/// query's order, from the moment it opens (no empty first frame).
///
/// Reading ``rows`` or ``failures`` inside a SwiftUI body (or `withObservationTracking`)
/// registers the read, and every change the store makes to them notifies, on the thread that
/// made it. ``updates()`` gives the same as an `AsyncSequence` of row arrays. A record that
/// does not decode is left out and listed in ``failures``; it never ends the query. The query
/// closes when this object is released, or with ``close()``.
public final class LiveResults<Value: Codable & Sendable>: Observable, Sendable {
    public let spec: QuerySpec
    private let collection: TypedCollection<Value>
    private let query: LiveQuery
    private let registrar = ObservationRegistrar()

    /// The query's rows, decoded or not, as the store keeps them (deltas apply to these).
    private enum Entry {
        case row(TypedRow<Value>)
        case failed(DecodeFailure)
    }

    private struct State {
        var entries: [Entry] = []
        var rows: [TypedRow<Value>] = []
        var failures: [DecodeFailure] = []
        var streams = RowStreams<TypedRow<Value>>()
        /// Deliveries in the order of their calls (two threads' may arrive in either order).
        var order = NumberedDeltas<Entry>()
    }

    private let state = Mutex(State())

    init(collection: TypedCollection<Value>, spec: QuerySpec) throws(CollectionError) {
        self.spec = spec
        self.collection = collection
        query = try storeCall { () throws(OptimistError) in try collection.store.query(spec) }
        let box = WeakTarget(self)
        let (rows, _, delivered) = try storeCall { () throws(OptimistError) in
            try query.rowsAndSubscribeNumbered { number, deltas in box.target?.apply(number, deltas) }
        }
        let entries = rows.map(decode)
        state.withLock { s in
            s.entries = entries
            s.order.start(after: delivered, to: &s.entries)
            Self.project(&s)
        }
    }

    deinit { query.close() }

    /// The decoded rows, in the query's order.
    public var rows: [TypedRow<Value>] {
        registrar.access(self, keyPath: \.rows)
        return state.withLock { $0.rows }
    }

    /// The records of the result that do not decode (left out of ``rows``).
    public var failures: [DecodeFailure] {
        registrar.access(self, keyPath: \.failures)
        return state.withLock { $0.failures }
    }

    /// The rows now, then after every change, as an async sequence; it ends when the consumer
    /// stops iterating or the query closes.
    public func updates() -> AsyncStream<[TypedRow<Value>]> {
        let (stream, continuation) = AsyncStream<[TypedRow<Value>]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in s.streams.add(continuation, now: s.rows) }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { $0.streams.remove(id) } }
        return stream
    }

    /// Stops following the store; ``updates()`` sequences end. Closing twice is a no-op.
    public func close() {
        query.close()
        let streams = state.withLock { $0.streams.takeAll() }
        for c in streams { c.finish() }
    }

    private func decode(_ row: QueryRow) -> Entry {
        guard case .record(let key, let record, let status) = row else {
            return .failed(DecodeFailure(key: "", error: .store(.misuse("a grouped query has no typed rows"))))
        }
        do { return .row(TypedRow(key: key, value: try collection.decode(record, key), status: status)) } catch {
            return .failed(DecodeFailure(key: key, error: error))
        }
    }

    private func apply(_ number: UInt64, _ deltas: [QueryDelta]) {
        // Decoded outside the lock.
        let decoded = deltas.map { d -> (QueryDelta, Entry?) in
            switch d {
            case .insert(_, let row), .update(_, let row): (d, decode(row))
            case .delete: (d, nil)
            }
        }
        var failuresChanged = false
        let (rows, streams, changed) = state.withLock { s -> ([TypedRow<Value>], [AsyncStream<[TypedRow<Value>]>.Continuation], Bool) in
            let failuresBefore = s.failures
            guard s.order.take(number, decoded, to: &s.entries) else { return (s.rows, [], false) }
            Self.project(&s)
            failuresChanged = s.failures != failuresBefore
            return (s.rows, s.streams.all, true)
        }
        guard changed else { return }  // waits for an earlier call's
        registrar.withMutation(of: self, keyPath: \.rows) {}
        if failuresChanged { registrar.withMutation(of: self, keyPath: \.failures) {} }
        for c in streams { c.yield(rows) }
    }

    private static func project(_ s: inout State) {
        var rows = [TypedRow<Value>]()
        var failures = [DecodeFailure]()
        rows.reserveCapacity(s.entries.count)
        for e in s.entries {
            switch e {
            case .row(let r): rows.append(r)
            case .failed(let f): failures.append(f)
            }
        }
        s.rows = rows
        s.failures = failures
    }
}
