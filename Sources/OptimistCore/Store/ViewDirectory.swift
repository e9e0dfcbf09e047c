import OptimistModel
import OptimistThreads
import Synchronization

/// A view's value as of the last change that finished: what ``Store/viewValue(_:)-(Key)``
/// returns without the state lock.
///
/// A call in progress changes a view's working value (``ViewState/value``) once per record it
/// touches, so readers must not see that one: the value is copied here at the end of the
/// call's state-lock hold (``Engine/publishViews()``), after every record's read-cache entry
/// the call changed was dropped, so a reader that sees the new value and then gets one of
/// those records sees the new record too.
final class PublishedValue: @unchecked Sendable {
    private let bits = Atomic<UInt64>(0)

    init(_ value: Double) { bits.store(value.bitPattern, ordering: .releasing) }

    var value: Double { Double(bitPattern: bits.load(ordering: .acquiring)) }

    func publish(_ value: Double) { bits.store(value.bitPattern, ordering: .releasing) }
}

/// The views by name, for a ``Store/viewValue(_:)-(Key)`` that takes no state lock: one small
/// lock, held for a dictionary lookup. Changed only under the state lock, in the hold that
/// defines a view (so a reader finds a view from the moment a call defining it ends).
final class ViewDirectory: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var byName: [Key: PublishedValue] = [:]

    /// The view's published value; nil: no view by that name. (The value, not the
    /// ``PublishedValue``: handing that out cost a retain and a release per read.)
    func value(_ name: Key) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        return byName[name]?.value
    }

    func set(_ name: Key, _ value: PublishedValue) {
        lock.lock()
        defer { lock.unlock() }
        byName[name] = value
    }

    /// Every view goes (the store closes).
    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        byName = [:]
    }
}
