import Observation
import Synchronization

/// A record that keeps itself up to date, for a SwiftUI screen: reading ``value`` or
/// ``status`` inside a view's body (or `withObservationTracking`) registers the read, and every
/// change of the record through the store — a mutate, a commit, a rollback, a pull — notifies.
///
/// Updates arrive on the thread that changed the store (the sync's own thread for pulled
/// changes); SwiftUI hops to the main actor by itself when it observes. The record stops
/// listening when it is released.
public final class LiveRecord: Observable, Sendable {
    public let collection: Key
    public let key: Key
    private let registrar = ObservationRegistrar()
    private let state: Mutex<(value: Record?, status: RecordStatus)>
    private let subscription = Mutex<(store: Store, id: UInt64)?>(nil)

    init(store: Store, collection: Key, key: Key) throws(OptimistError) {
        self.collection = collection
        self.key = key
        state = Mutex((nil, .confirmed))
        // Subscribed before the first read, so no change falls between the two.
        let id = try store.subscribe(collection: collection, prefix: key) { [weak self] changes in
            guard let self else { return }
            for c in changes where c.key == self.key { self.update(c.value, c.status) }
        }
        subscription.withLock { $0 = (store, id) }
        let e = try store.explain(collection, key)
        let status: RecordStatus = e.layers.isEmpty ? .confirmed : e.layers.contains { $0.status == .failed } ? .failed : .pending
        state.withLock { $0 = (e.visible, status) }
    }

    deinit {
        if let (store, id) = subscription.withLock({ $0 }) { try? store.unsubscribe(id) }
    }

    /// The visible value (nil: no record).
    public var value: Record? {
        registrar.access(self, keyPath: \.value)
        return state.withLock { $0.value }
    }

    /// `confirmed`, `pending` or `failed` (a kept failure touches it): the badge to show.
    public var status: RecordStatus {
        registrar.access(self, keyPath: \.status)
        return state.withLock { $0.status }
    }

    private func update(_ value: Record?, _ status: RecordStatus) {
        let (oldValue, oldStatus) = state.withLock { ($0.value, $0.status) }
        if oldValue != value {
            registrar.withMutation(of: self, keyPath: \.value) { state.withLock { $0.value = value } }
        }
        if oldStatus != status {
            registrar.withMutation(of: self, keyPath: \.status) { state.withLock { $0.status = status } }
        }
    }
}

/// A view's value that keeps itself up to date (see ``LiveRecord``).
public final class LiveView: Observable, Sendable {
    public let name: String
    private let registrar = ObservationRegistrar()
    private let current: Mutex<Double>
    private let subscription = Mutex<(store: Store, id: UInt64)?>(nil)

    init(store: Store, name: String, collection: Key, prefix: Key) throws(OptimistError) {
        self.name = name
        current = Mutex(0)
        let id = try store.subscribe(collection: collection, prefix: prefix) { [weak self, weak store] _ in
            guard let self, let store, let v = try? store.viewValue(self.name) else { return }
            guard self.current.withLock({ $0 }) != v else { return }
            self.registrar.withMutation(of: self, keyPath: \.value) { self.current.withLock { $0 = v } }
        }
        subscription.withLock { $0 = (store, id) }
        let v = try store.viewValue(name)
        current.withLock { $0 = v }
    }

    deinit {
        if let (store, id) = subscription.withLock({ $0 }) { try? store.unsubscribe(id) }
    }

    public var value: Double {
        registrar.access(self, keyPath: \.value)
        return current.withLock { $0 }
    }
}

extension Store {
    /// A record that updates itself as the store changes (Observation).
    public func liveRecord(_ collection: Key, _ key: Key) throws(OptimistError) -> LiveRecord {
        try LiveRecord(store: self, collection: collection, key: key)
    }

    /// A view's value that updates itself; `collection` and `prefix` are the view's own (as
    /// given to ``/OptimistCore/Store/defineView(_:collection:prefix:kind:)``).
    public func liveView(_ name: String, collection: Key, prefix: Key = "") throws(OptimistError) -> LiveView {
        try LiveView(store: self, name: name, collection: collection, prefix: prefix)
    }
}
