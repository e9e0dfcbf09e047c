/// A record of a ``TypedCollection`` whose visible value or status changed.
public struct TypedChange<Value: Codable & Sendable>: Sendable {
    /// The record's key.
    public var key: Key
    /// The new visible value; nil when the record is gone.
    public var value: Value?
    /// The record's status after the change.
    public var status: RecordStatus
    /// What changed it: a mutate, a commit, a rollback, a pull (`server`), …
    public var cause: ChangeCause
    /// Whether a not-yet-ended mutation still touches the record.
    public var pending: Bool { status != .confirmed }
    /// Set when the record's new value did not decode as `Value` (a stream made with
    /// `undecodable: .report`): `value` is then nil and this says why; the stream goes on.
    public var failure: CollectionError?

    public init(key: Key, value: Value?, status: RecordStatus, cause: ChangeCause, failure: CollectionError? = nil) {
        self.key = key
        self.value = value
        self.status = status
        self.cause = cause
        self.failure = failure
    }
}

/// What a typed stream does with a record that does not decode as its type.
public enum UndecodablePolicy: Sendable {
    /// End the iteration with ``CollectionError/coding(_:)`` naming the record.
    case `throw`
    /// Deliver the change with `value` nil and ``TypedChange/failure`` set, and go on.
    case report
}

extension TypedChange: Equatable where Value: Equatable {}

/// The changes of a ``TypedCollection`` as they happen, one record at a time, decoded: what
/// ``TypedCollection/changes(prefix:undecodable:)`` returns.
///
/// Every change after the call is delivered, in the order the store made them, however fast
/// they come (nothing is dropped; a slow consumer lets them queue up). The subscription ends
/// when iteration stops. A record that does not decode ends the iteration with
/// ``CollectionError/coding(_:)`` naming it, or, made with `undecodable: .report`, comes as a
/// change with ``TypedChange/failure`` set, and the stream goes on.
public struct TypedChanges<Value: Codable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = TypedChange<Value>
    public typealias Failure = CollectionError

    let batches: AsyncStream<[Change]>
    let collection: TypedCollection<Value>
    let undecodable: UndecodablePolicy

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator(), collection: collection, undecodable: undecodable)
    }

    /// Takes the store's batches apart and decodes each record.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: AsyncStream<[Change]>.Iterator
        let collection: TypedCollection<Value>
        let undecodable: UndecodablePolicy
        var batch: [Change] = []
        var index = 0

        init(batches: AsyncStream<[Change]>.Iterator, collection: TypedCollection<Value>, undecodable: UndecodablePolicy) {
            self.batches = batches
            self.collection = collection
            self.undecodable = undecodable
        }

        public mutating func next() async throws(CollectionError) -> TypedChange<Value>? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CollectionError) -> TypedChange<Value>? {
            while index == batch.count {
                guard let more = await batches.next(isolation: actor) else { return nil }
                batch = more
                index = 0
            }
            let c = batch[index]
            index += 1
            do throws(CollectionError) {
                let value = try c.value.map { (record: Record) throws(CollectionError) -> Value in try collection.decode(record, c.key) }
                return TypedChange(key: c.key, value: value, status: c.status, cause: c.cause)
            } catch {
                guard undecodable == .report else { throw error }
                return TypedChange(key: c.key, value: nil, status: c.status, cause: c.cause, failure: error)
            }
        }
    }
}

extension TypedCollection {
    /// The collection's changes (of records whose key starts with `prefix`) from now on, as
    /// an async sequence of decoded values. A record that does not decode ends the iteration
    /// (`undecodable: .throw`, the default) or comes with ``TypedChange/failure`` set while the
    /// stream goes on (`.report`: another app version's records, a hand-edited one).
    ///
    /// ```swift
    /// for try await change in try habits.changes(undecodable: .report) {
    ///     if let failure = change.failure { log("skipped \(change.key): \(failure)"); continue }
    ///     redraw(change.key, change.value)
    /// }
    /// ```
    public func changes(prefix: Key? = nil, undecodable: UndecodablePolicy = .throw) throws(CollectionError) -> TypedChanges<Value> {
        let batches = try storeCall { () throws(OptimistError) in try store.changes(collection: name, prefix: prefix) }
        return TypedChanges(batches: batches, collection: self, undecodable: undecodable)
    }
}
