@testable import OptimistCore
@_exported import OptimistTestSupport

/// Collects listener batches across threads.
final class ChangeLog: @unchecked Sendable {
    private var batches: [[Change]] = []
    private let lock = NSLockLike()
    func append(_ b: [Change]) { lock.withLock { batches.append(b) } }
    var all: [[Change]] { lock.withLock { batches } }
}

import Synchronization
final class NSLockLike: Sendable {
    private let m = Mutex(())
    func withLock<R>(_ body: () -> R) -> R { m.withLock { _ in body() } }
}
