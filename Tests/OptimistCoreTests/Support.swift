import Foundation
@testable import OptimistCore
@testable import OptimistModel
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

/// A value shared between a test's threads.
final class Locked<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var v: T
    init(_ v: T) { self.v = v }
    var value: T {
        get { lock.withLock { v } }
        set { lock.withLock { v = newValue } }
    }
}

/// Runs `read` on this thread while another thread holds `s`'s state lock: its value, and
/// whether it returned while the lock was still held. (An order of events, not a time
/// limit: the holder lets go once `read` has returned, or after ten seconds.)
func readWhileStateLockHeld<R>(_ s: Store, _ read: () throws -> R) throws -> (value: R, whileHeld: Bool) {
    let holding = DispatchSemaphore(value: 0), answered = DispatchSemaphore(value: 0)
    let released = Locked(false)
    let holder = Thread {
        s.state { _ in
            holding.signal()
            _ = answered.wait(timeout: .now() + 10)
            released.value = true
        }
    }
    holder.start()
    holding.wait()
    defer {
        answered.signal()
        while !holder.isFinished { usleep(1000) }
    }
    let value = try read()
    return (value, !released.value)
}
