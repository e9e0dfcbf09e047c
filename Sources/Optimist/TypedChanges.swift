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

    public init(key: Key, value: Value?, status: RecordStatus, cause: ChangeCause) {
        self.key = key
        self.value = value
        self.status = status
        self.cause = cause
    }
}

extension TypedChange: Equatable where Value: Equatable {}

/// The changes of a ``TypedCollection`` as they happen, one record at a time, decoded: what
/// ``TypedCollection/changes(prefix:)`` returns.
///
/// Every change after the call is delivered, in the order the store made them, however fast
/// they come (nothing is dropped; a slow consumer lets them queue up). The subscription ends
/// when iteration stops. A record that does not decode ends the iteration with
/// ``CollectionError/coding(_:)`` naming it.
public struct TypedChanges<Value: Codable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = TypedChange<Value>
    public typealias Failure = CollectionError

    let batches: AsyncStream<[Change]>
    let collection: TypedCollection<Value>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator(), collection: collection)
    }

    /// Takes the store's batches apart and decodes each record.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: AsyncStream<[Change]>.Iterator
        let collection: TypedCollection<Value>
        var batch: [Change] = []
        var index = 0

        init(batches: AsyncStream<[Change]>.Iterator, collection: TypedCollection<Value>) {
            self.batches = batches
            self.collection = collection
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
            let value = try c.value.map { (record: Record) throws(CollectionError) -> Value in try collection.decode(record, c.key) }
            return TypedChange(key: c.key, value: value, status: c.status, cause: c.cause)
        }
    }
}

extension TypedCollection {
    /// The collection's changes (of records whose key starts with `prefix`) from now on, as
    /// an async sequence of decoded values.
    public func changes(prefix: Key? = nil) throws(CollectionError) -> TypedChanges<Value> {
        let batches = try storeCall { () throws(OptimistError) in try store.changes(collection: name, prefix: prefix) }
        return TypedChanges(batches: batches, collection: self)
    }
}
