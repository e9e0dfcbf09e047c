/// A collection whose records are an app's own `Codable` type: what
/// ``OptimistCore/Store/collection(_:of:)`` returns.
///
/// A handle only: it holds the store and the collection's name, costs nothing to make, and every
/// call goes to the store as the untyped API would (the same mutations, statuses, views and
/// changes; a record written here reads back through ``/OptimistCore/Store/get(_:_:)`` and the
/// other hosts). Values are encoded with ``RecordEncoder`` and decoded with
/// ``RecordDecoder``; a record that does not decode is a
/// ``CollectionError/coding(_:)`` naming the collection, key and field.
public struct TypedCollection<Value: Codable & Sendable>: Sendable {
    /// The store the records live in.
    public let store: Store
    /// The collection's name.
    public let name: Key
    /// Whether `Value` chooses its own JSON form (``JSONRepresentable``), asked once here: the
    /// runtime's conformance lookup would otherwise cost every get and put a noticeable share
    /// of decoding a small record.
    let representsItself: Bool

    init(store: Store, name: Key) {
        self.store = store
        self.name = name
        representsItself = Value.self is any JSONRepresentable.Type
    }

    // MARK: Reads

    /// The visible value under `key`, or nil when there is none.
    public func get(_ key: Key) throws(CollectionError) -> Value? {
        guard let record = try storeCall({ () throws(OptimistError) in try store.get(name, key) }) else { return nil }
        return try decode(record, key)
    }

    /// The confirmed value under `key` (what the server acknowledged), or nil.
    public func confirmed(_ key: Key) throws(CollectionError) -> Value? {
        guard let record = try storeCall({ () throws(OptimistError) in try store.confirmed(name, key) }) else { return nil }
        return try decode(record, key)
    }

    /// The visible values whose key starts with `prefix`, in byte order of the keys; `limit`
    /// 0 means all.
    ///
    /// - Throws: ``CollectionError/coding(_:)`` for the first record that does not decode.
    public func scan(prefix: Key = "", limit: Int = 0) throws(CollectionError) -> [(key: Key, value: Value)] {
        let rows = try storeCall { () throws(OptimistError) in try store.scan(name, prefix: prefix, limit: limit) }
        var out = [(key: Key, value: Value)]()
        out.reserveCapacity(rows.count)
        for row in rows { out.append((row.key, try decode(row.value, row.key))) }
        return out
    }

    /// Whether a not-yet-ended mutation touches the record.
    public func isPending(_ key: Key) throws(CollectionError) -> Bool {
        try storeCall { () throws(OptimistError) in try store.isPending(name, key) }
    }

    /// The record's status, the badge a UI shows: `confirmed`, `pending`, or `failed` when a
    /// failure kept visible (policy `.keep`) touches it.
    public func status(_ key: Key) throws(CollectionError) -> RecordStatus {
        let layers = try storeCall { () throws(OptimistError) in try store.explain(name, key).layers }
        if layers.isEmpty { return .confirmed }
        return layers.contains { $0.status == .failed } ? .failed : .pending
    }

    // MARK: Writes

    /// Stores `value` under `key` (replacing the record whole), visible at once and pending
    /// until the server answers. Returns the mutation's id.
    @discardableResult
    public func put(_ value: Value, at key: Key, dedupeKey: String? = nil,
                    policy: FailurePolicy = .rollback) throws(CollectionError) -> MutationID {
        try mutate([putOp(value, at: key)], dedupeKey: dedupeKey, policy: policy)
    }

    /// Removes the record under `key` (no error when there is none).
    @discardableResult
    public func delete(_ key: Key, dedupeKey: String? = nil, policy: FailurePolicy = .rollback) throws(CollectionError) -> MutationID {
        try mutate([.delete(collection: name, key: key)], dedupeKey: dedupeKey, policy: policy)
    }

    /// Changes the visible value under `key` with `change` and sends only what changed, as a
    /// merge patch: fields the closure left alone are not in it, so a concurrent change of
    /// them (another device's, pulled meanwhile) survives. Returns nil, and sends nothing,
    /// when the closure changed nothing.
    ///
    /// - Throws: `.store(.notFound)` when there is no record under `key`.
    @discardableResult
    public func update(_ key: Key, dedupeKey: String? = nil, policy: FailurePolicy = .rollback,
                       _ change: (inout Value) -> Void) throws(CollectionError) -> MutationID? {
        guard let record = try storeCall({ () throws(OptimistError) in try store.get(name, key) }) else {
            throw .store(.notFound("no record \(name)/\(key) to update"))
        }
        var value = try decode(record, key)
        // Diffed against the value re-encoded, not the stored record, so members the type does
        // not know of (another app version's) are not taken for removed ones. Encoded before
        // the change, since a class instance is changed in place.
        let before = try encode(value, key)
        change(&value)
        let after = try encode(value, key)
        guard let patch = mergePatch(from: .object(before), to: .object(after)), case .object(let members) = patch else {
            return nil
        }
        return try mutate([.patch(collection: name, key: key, value: members)], dedupeKey: dedupeKey, policy: policy)
    }

    /// Sets one top-level field of the record under `key`, named by its key path, without
    /// reading the record: a merge patch of that field alone (nil removes it). A missing
    /// record is created with just that field, as a patch does.
    ///
    /// - Throws: `.store(.misuse)` when `field` is not a top-level stored property of
    ///   `Value` (see ``fieldName(_:)``).
    @discardableResult
    public func patch<Field: Encodable>(_ key: Key, _ field: KeyPath<Value, Field>, to newValue: Field,
                                        dedupeKey: String? = nil, policy: FailurePolicy = .rollback) throws(CollectionError) -> MutationID {
        let fieldName = try self.fieldName(field)
        let json: JSON
        do { json = try RecordEncoder().encodeValue(newValue) } catch {
            throw .coding(RecordCodingError(path: [.field(fieldName)] + error.path, reason: error.reason).at(collection: name, key: key))
        }
        return try mutate([.patch(collection: name, key: key, value: [Key(fieldName): json])], dedupeKey: dedupeKey, policy: policy)
    }

    /// The put op for `value`, to send together with other ops in one atomic
    /// ``/OptimistCore/Store/mutate(_:dedupeKey:policy:)``.
    public func putOp(_ value: Value, at key: Key) throws(CollectionError) -> Op {
        .put(collection: name, key: key, value: try encode(value, key))
    }

    // MARK: Helpers

    func mutate(_ ops: [Op], dedupeKey: String?, policy: FailurePolicy) throws(CollectionError) -> MutationID {
        try storeCall { () throws(OptimistError) in try store.mutate(ops, dedupeKey: dedupeKey, policy: policy) }
    }

    func decode(_ record: Record, _ key: Key) throws(CollectionError) -> Value {
        do { return try RecordDecoder().decode(Value.self, from: record, representsItself: representsItself) } catch {
            throw .coding(error.at(collection: name, key: key))
        }
    }

    func encode(_ value: Value, _ key: Key) throws(CollectionError) -> Record {
        do { return try RecordEncoder().encode(value, representsItself: representsItself) } catch {
            throw .coding(error.at(collection: name, key: key))
        }
    }
}

/// Runs a store call, its error wrapped as a collection error.
@inline(__always)
func storeCall<R>(_ body: () throws(OptimistError) -> R) throws(CollectionError) -> R {
    do { return try body() } catch { throw .store(error) }
}

/// The RFC 7396 merge patch that takes `old` to `new`: changed and added members, removed
/// ones as null, objects diffed member by member; nil when they are equal.
func mergePatch(from old: JSON, to new: JSON) -> JSON? {
    if old == new { return nil }
    guard case .object(let o) = old, case .object(let n) = new else { return new }
    var patch = [Key: JSON]()
    for (k, v) in n {
        if let before = o[k] {
            if let p = mergePatch(from: before, to: v) { patch[k] = p }
        } else {
            patch[k] = v
        }
    }
    for k in o.keys where n[k] == nil { patch[k] = .null }
    return patch.isEmpty ? nil : .object(patch)
}

extension Store {
    /// The records of `collection` as values of your own `Codable` type:
    /// `store.collection("logs", of: HabitLog.self)`.
    public func collection<Value: Codable & Sendable>(_ name: Key, of type: Value.Type = Value.self) -> TypedCollection<Value> {
        TypedCollection(store: self, name: name)
    }
}
