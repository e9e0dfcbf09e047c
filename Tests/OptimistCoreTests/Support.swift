@testable import OptimistCore

/// Shorthands so tests read like the contract.
func put(_ c: Key, _ k: Key, _ v: Record) -> Op { .put(collection: c, key: k, value: v) }
func patch(_ c: Key, _ k: Key, _ v: Record) -> Op { .patch(collection: c, key: k, value: v) }
func delete(_ c: Key, _ k: Key) -> Op { .delete(collection: c, key: k) }
func incr(_ c: Key, _ k: Key, _ f: Key, _ d: Double) -> Op { .incr(collection: c, key: k, field: f, delta: d) }

/// A deterministic generator (SplitMix64) so a failing random test can be replayed by seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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
