#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Optimist
import OptimistModel

/// The store's times as `Date`s: the library's own calls take milliseconds since 1970 on your
/// clock (it never reads one); these say the same with `Date`.
extension Store {
    /// ``/OptimistCore/Store/fail(_:transient:reason:now:)`` at `now`.
    public func fail(_ id: MutationID, transient: Bool, reason: String? = nil, at now: Date) throws(OptimistError) {
        try fail(id, transient: transient, reason: reason, now: now.optimistMilliseconds)
    }

    /// ``/OptimistCore/Store/outboxNext(now:)`` at `now`.
    public func outboxNext(at now: Date) throws(OptimistError) -> MutationRecord? {
        try outboxNext(now: now.optimistMilliseconds)
    }

    /// ``/OptimistCore/Store/markLoaded(_:from:to:at:)`` at `date`.
    public func markLoaded(_ collection: Key, from: Key, to: Key, at date: Date) throws(OptimistError) {
        try markLoaded(collection, from: from, to: to, at: date.optimistMilliseconds)
    }

    /// ``/OptimistCore/Store/needsReload(_:_:now:maxAge:)`` at `now`, with the age as a
    /// `Duration`.
    public func needsReload(_ collection: Key, _ key: Key, at now: Date, maxAge: Duration) throws(OptimistError) -> Bool {
        try needsReload(collection, key, now: now.optimistMilliseconds, maxAge: maxAge.optimistMilliseconds)
    }
}

extension Date {
    /// Milliseconds since 1970, rounded down, clamped to `Int64`.
    var optimistMilliseconds: Int64 {
        let ms = (timeIntervalSince1970 * 1000).rounded(.down)
        if ms >= 9.2e18 { return Int64.max }
        if ms <= -9.2e18 { return Int64.min }
        return Int64(ms)
    }
}

/// One error story for an app: both errors a store call can throw are `LocalizedError`, so
/// `error.localizedDescription` (an alert, a log line) says what happened, not "The operation
/// couldn't be completed".
extension OptimistError: LocalizedError {
    public var errorDescription: String? { message }
}

extension CollectionError: LocalizedError {
    public var errorDescription: String? { description }
}
