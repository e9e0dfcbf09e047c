import Observation
import Synchronization

/// One group of a typed grouped query: its `by` values and its aggregates. `Identifiable` by
/// its `by` values (unique among the rows), so a SwiftUI `List` takes the rows as they are.
public struct GroupRow: Identifiable, Sendable, Equatable {
    /// The collection the group's records are in (named in decoding errors).
    public let collection: Key
    /// Each `by` value, named by its field path as written (a missing field is null).
    public let group: [Key: JSON]
    /// Each aggregate, by the name the query gave it.
    public let values: [Key: JSON]
    /// The `by` values in the order the query names them.
    public let id: [JSON]

    /// A numeric aggregate by name (a `count`, `sum` or `avg`; a `min` or `max` of numbers):
    /// nil when it is null (an `avg` of no number) or not a number.
    ///
    /// ```swift
    /// let minutes = row.number("minutes") ?? 0
    /// ```
    public func number(_ aggregate: String) -> Double? { values[Key(aggregate)]?.number }

    /// An aggregate by name, decoded as `T` (a `min` or `max` of a field of that type); nil
    /// when it is null.
    ///
    /// ```swift
    /// let firstDay = try row.value("first", as: String.self)
    /// ```
    ///
    /// - Throws: `.coding` when the value does not decode as `T`; `.store(.notFound)` when
    ///   the query has no aggregate of that name.
    public func value<T: Decodable>(_ aggregate: String, as type: T.Type) throws(CollectionError) -> T? {
        guard let v = values[Key(aggregate)] else { throw .store(.notFound("no aggregate \"\(aggregate)\" in the group's values")) }
        return try decode(v, as: type)
    }

    /// The group's value of the `by` field `path` (as the query names it: the stored field's
    /// name, or a dotted path), decoded as `T`; nil when the records lack the field.
    ///
    /// ```swift
    /// let habit = try row.key("habit", as: String.self)
    /// ```
    ///
    /// - Throws: `.coding` when the value does not decode as `T`; `.store(.notFound)` when
    ///   the query does not group by that path.
    public func key<T: Decodable>(_ path: String, as type: T.Type) throws(CollectionError) -> T? {
        guard let v = group[Key(path)] else { throw .store(.notFound("the query does not group by \"\(path)\"")) }
        return try decode(v, as: type)
    }

    private func decode<T: Decodable>(_ v: JSON, as type: T.Type) throws(CollectionError) -> T? {
        if case .null = v { return nil }
        do { return try RecordDecoder().decodeValue(type, from: v) } catch {
            throw .coding(error.at(collection: collection, key: ""))
        }
    }
}

/// A grouped live query on a ``TypedCollection``, built with key paths (no JSON): the records a
/// ``TypedQuery`` narrows (range, filters), grouped by fields, with named aggregates. Open it
/// with ``live()``.
///
/// ```swift
/// // Minutes per habit today, kept current as taps land.
/// let today = try logs.query().keys(prefix: "2026-11-26/")
///     .grouped(by: \.habit)
///     .count(as: "n")
///     .sum(\.minutes, as: "minutes")
///     .live()
/// for row in today.rows { print(try row.key("habit", as: String.self) ?? "-", row.number("minutes") ?? 0) }
/// ```
///
/// Groups come in ascending order of their `by` values (a grouped query has no other order);
/// ``limit(_:)`` counts groups.
public struct TypedGroupQuery<Value: Codable & Sendable>: Sendable {
    public let collection: TypedCollection<Value>
    private let base: TypedQuery<Value>
    private var by: [FieldPath]
    private var aggregates: [QueryAggregate] = []
    private var count: Int?

    init(base: TypedQuery<Value>, by: [FieldPath]) {
        collection = base.collection
        self.base = base
        self.by = by
    }

    /// Groups also by the field at `keyPath`, after the fields named before.
    public func then<Field: Encodable>(by keyPath: KeyPath<Value, Field>) throws(CollectionError) -> Self {
        var q = self
        q.by.append(FieldPath(names: [Key(try collection.fieldName(keyPath))]))
        return q
    }

    /// Adds `name`: the number of records in the group.
    public func count(as name: String = "count") -> Self { adding(name, .count) }

    /// Adds `name`: the sum of the numeric field at `keyPath` over the group (0 when none).
    public func sum<N: Numeric & Encodable>(_ keyPath: KeyPath<Value, N>, as name: String) throws(CollectionError) -> Self {
        adding(name, .sum(try path(keyPath)))
    }

    /// The same for an optional field (records without it add nothing).
    public func sum<N: Numeric & Encodable>(_ keyPath: KeyPath<Value, N?>, as name: String) throws(CollectionError) -> Self {
        adding(name, .sum(try path(keyPath)))
    }

    /// Adds `name`: the mean of the numeric field at `keyPath` over the group (null when none).
    public func average<N: Numeric & Encodable>(_ keyPath: KeyPath<Value, N>, as name: String) throws(CollectionError) -> Self {
        adding(name, .avg(try path(keyPath)))
    }

    /// Adds `name`: the least value of the field at `keyPath` in the group, by the queries'
    /// order over values (null when none); it stays right when that record leaves.
    public func min<Field: Encodable>(_ keyPath: KeyPath<Value, Field>, as name: String) throws(CollectionError) -> Self {
        adding(name, .min(try path(keyPath)))
    }

    /// Adds `name`: the greatest value of the field at `keyPath` in the group (null when none).
    public func max<Field: Encodable>(_ keyPath: KeyPath<Value, Field>, as name: String) throws(CollectionError) -> Self {
        adding(name, .max(try path(keyPath)))
    }

    /// Adds an aggregate of any kind over a field given by its path (a nested field).
    public func aggregate(_ kind: QueryAggregateKind, as name: String) -> Self { adding(name, kind) }

    /// At most `n` groups: the first `n` in the order of their `by` values.
    public func limit(_ n: Int) -> Self {
        var q = self
        q.count = n
        return q
    }

    /// The spec this builds (what every host would write as JSON: `QuerySpec.json`).
    ///
    /// - Throws: `.store(.invalid)` for a limit below 1, two aggregates of one name, a `by`
    ///   field named twice, or a ``TypedQuery`` with `sorted` (groups have their own order).
    public func spec() throws(CollectionError) -> QuerySpec {
        var spec = try base.spec()
        let group = QueryGroup(by: by, aggregates: aggregates)
        let limit = count
        return try storeCall { () throws(OptimistError) in
            spec = try QuerySpec(collection: spec.collection, range: spec.range, predicate: spec.predicate,
                                 order: spec.order, limit: limit ?? spec.limit, group: group)
            return spec
        }
    }

    /// Opens the query: its groups exist at once and stay current.
    public func live() throws(CollectionError) -> LiveGroups {
        try LiveGroups(store: collection.store, spec: spec())
    }

    private func adding(_ name: String, _ kind: QueryAggregateKind) -> Self {
        var q = self
        q.aggregates.append(QueryAggregate(name: name, kind: kind))
        return q
    }

    private func path<Field>(_ keyPath: KeyPath<Value, Field>) throws(CollectionError) -> FieldPath where Field: Encodable {
        FieldPath(names: [Key(try collection.fieldName(keyPath))])
    }
}

extension TypedQuery {
    /// Groups the records this query narrows by the field at `keyPath` (add more with
    /// ``TypedGroupQuery/then(by:)``), to add aggregates to and open as ``LiveGroups``.
    public func grouped<Field: Encodable>(by keyPath: KeyPath<Value, Field>) throws(CollectionError) -> TypedGroupQuery<Value> {
        TypedGroupQuery(base: self, by: [FieldPath(names: [Key(try collection.fieldName(keyPath))])])
    }

    /// Groups by fields given by their paths (nested fields, or several at once).
    public func grouped(by paths: [FieldPath]) -> TypedGroupQuery<Value> {
        TypedGroupQuery(base: self, by: paths)
    }
}

/// The groups of a grouped live query, kept current, from the moment it opens (no empty
/// first frame): each group's `by` values and aggregates, in ascending order of `by`.
///
/// Reading ``rows`` inside a SwiftUI body (or `withObservationTracking`) registers the read,
/// and every change the store makes to them notifies, on the thread that made it.
/// ``updates()`` gives the same as an `AsyncSequence` of row arrays. The query closes when
/// this object is released, or with ``close()``.
public final class LiveGroups: Observable, Sendable {
    public let spec: QuerySpec
    private let query: LiveQuery
    private let registrar = ObservationRegistrar()

    private struct State {
        var rows: [GroupRow] = []
        var streams = RowStreams<GroupRow>()
        /// Deliveries in the order of their calls (two threads' may arrive in either order).
        var order = NumberedDeltas<GroupRow>()
    }

    private let state = Mutex(State())

    init(store: Store, spec: QuerySpec) throws(CollectionError) {
        self.spec = spec
        query = try storeCall { () throws(OptimistError) in try store.query(spec) }
        let box = WeakTarget(self)
        let (rows, _, delivered) = try storeCall { () throws(OptimistError) in
            try query.rowsAndSubscribeNumbered { number, deltas in box.target?.apply(number, deltas) }
        }
        let converted = rows.compactMap(convert)
        state.withLock { s in
            s.rows = converted
            s.order.start(after: delivered, to: &s.rows)
        }
    }

    deinit { query.close() }

    /// The groups, in ascending order of their `by` values.
    public var rows: [GroupRow] {
        registrar.access(self, keyPath: \.rows)
        return state.withLock { $0.rows }
    }

    /// The groups now, then after every change, as an async sequence; it ends when the
    /// consumer stops iterating or the query closes.
    public func updates() -> AsyncStream<[GroupRow]> {
        let (stream, continuation) = AsyncStream<[GroupRow]>.makeStream(bufferingPolicy: .bufferingNewest(1))
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

    private func convert(_ row: QueryRow) -> GroupRow? {
        guard case .group(let group, let values) = row else { return nil }
        let id = spec.group?.by.map { group[Key($0.text)] ?? .null } ?? []
        return GroupRow(collection: spec.collection, group: group, values: values, id: id)
    }

    private func apply(_ number: UInt64, _ deltas: [QueryDelta]) {
        let converted = deltas.map { d -> (QueryDelta, GroupRow?) in  // outside the lock
            switch d {
            case .insert(_, let row), .update(_, let row): (d, convert(row))
            case .delete: (d, nil)
            }
        }
        let (rows, streams, changed) = state.withLock { s -> ([GroupRow], [AsyncStream<[GroupRow]>.Continuation], Bool) in
            let changed = s.order.take(number, converted, to: &s.rows)
            return (s.rows, s.streams.all, changed)
        }
        guard changed else { return }  // waits for an earlier call's
        registrar.withMutation(of: self, keyPath: \.rows) {}
        for c in streams { c.yield(rows) }
    }
}
