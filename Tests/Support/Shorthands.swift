import OptimistCore
import OptimistModel

// Shared by the test targets (the `OptimistTestSupport` target): one copy of what every
// suite needs, instead of one per target.

/// Shorthands so tests read like the model in docs/concepts.md.
package func put(_ c: Key, _ k: Key, _ v: Record) -> Op { .put(collection: c, key: k, value: v) }
package func patch(_ c: Key, _ k: Key, _ v: Record) -> Op { .patch(collection: c, key: k, value: v) }
package func delete(_ c: Key, _ k: Key) -> Op { .delete(collection: c, key: k) }
package func incr(_ c: Key, _ k: Key, _ f: Key, _ d: Double) -> Op { .incr(collection: c, key: k, field: f, delta: d) }

/// A deterministic generator (SplitMix64) so a failing random test can be replayed by seed.
package struct SeededRandom: RandomNumberGenerator {
    package var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
