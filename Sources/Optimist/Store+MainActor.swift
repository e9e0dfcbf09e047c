/// Listeners on the main actor: a UI's code hears the store's changes where it runs.
extension Store {
    /// Calls `listener` on the main actor with each batch of changes (of `collection`, whose
    /// key starts with `prefix`; nil: all), in the order the store made them, as
    /// ``/OptimistCore/Store/subscribe(collection:prefix:_:)`` would on the changing thread.
    /// The batches queue up while the main actor is busy; none is dropped. Call
    /// ``MainActorSubscription/cancel()`` (or let the handle go) to stop.
    ///
    /// ```swift
    /// @MainActor final class Badge { var pending = 0 }
    /// let badge = Badge()
    /// let sub = try store.subscribeOnMainActor(collection: "logs") { changes in
    ///     badge.pending = changes.filter(\.pending).count
    /// }
    /// ```
    public func subscribeOnMainActor(collection: Key? = nil, prefix: Key? = nil,
                                     _ listener: @escaping @MainActor @Sendable ([Change]) -> Void) throws(OptimistError) -> MainActorSubscription {
        let batches = try changes(collection: collection, prefix: prefix)
        let task = Task { @MainActor in
            for await batch in batches {
                if Task.isCancelled { break }
                listener(batch)
            }
        }
        return MainActorSubscription(task: task)
    }
}

/// A subscription whose listener runs on the main actor (``OptimistCore/Store/subscribeOnMainActor(collection:prefix:_:)``):
/// it ends when cancelled or released.
public final class MainActorSubscription: Sendable {
    private let task: Task<Void, Never>

    init(task: Task<Void, Never>) { self.task = task }

    deinit { task.cancel() }

    /// Ends the subscription: no batch is delivered after the main actor next runs.
    public func cancel() { task.cancel() }
}
