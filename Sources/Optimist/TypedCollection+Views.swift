/// A count or sum the store keeps up to date over a collection's records (a view of
/// ``/OptimistCore/Store/defineView(_:collection:prefix:kind:)``, defined through a
/// ``TypedCollection``).
public struct CollectionView: Sendable {
    /// The store the view lives in.
    public let store: Store
    /// The view's name, as ``/OptimistCore/Store/viewValue(_:)-(String)`` knows it.
    public let name: String
    /// The collection and key prefix it covers.
    public let collection: Key
    public let prefix: Key

    /// The current value: the count of the visible records, or the sum of the field over them.
    public func value() throws(OptimistError) -> Double { try store.viewValue(name) }

    /// The value as an Observation-tracked object that updates itself (see ``LiveView``).
    public func live() throws(OptimistError) -> LiveView {
        try store.liveView(name, collection: collection, prefix: prefix)
    }
}

extension TypedCollection {
    /// Defines (or redefines) view `name`: the number of visible records whose key starts
    /// with `prefix`.
    public func countView(_ name: String, prefix: Key = "") throws(CollectionError) -> CollectionView {
        try define(name, prefix: prefix, kind: .count)
    }

    /// Defines (or redefines) view `name`: the sum of the numeric field `field` over the
    /// visible records whose key starts with `prefix` (`\.minutes`; see ``fieldName(_:)``).
    public func sumView<N: Numeric & Encodable>(_ name: String, of field: KeyPath<Value, N>,
                                                prefix: Key = "") throws(CollectionError) -> CollectionView {
        try define(name, prefix: prefix, kind: .sum(field: Key(try fieldName(field))))
    }

    /// The same for an optional field (records without it add 0).
    public func sumView<N: Numeric & Encodable>(_ name: String, of field: KeyPath<Value, N?>,
                                                prefix: Key = "") throws(CollectionError) -> CollectionView {
        try define(name, prefix: prefix, kind: .sum(field: Key(try fieldName(field))))
    }

    /// The same with the field given by its stored name, for a type the key path probe cannot
    /// sample.
    public func sumView(_ name: String, field: String, prefix: Key = "") throws(CollectionError) -> CollectionView {
        try define(name, prefix: prefix, kind: .sum(field: Key(field)))
    }

    private func define(_ view: String, prefix: Key, kind: ViewKind) throws(CollectionError) -> CollectionView {
        try storeCall { () throws(OptimistError) in try store.defineView(view, collection: name, prefix: prefix, kind: kind) }
        return CollectionView(store: store, name: view, collection: name, prefix: prefix)
    }
}
