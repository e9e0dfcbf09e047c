import OptimistModel

/// A mutation id as a dictionary key (the engine's tables and the store file writer's). Ids are
/// sequential integers, so a multiply-xorshift mix of the seed and the id spreads them well;
/// the default SipHash of a `UInt64` was a large share of a mutate's instructions
/// (BENCHMARKS.md). It lives with the engine, not the model: declared in another module, its
/// synthesized `==` was called through the conformance from every specialized lookup.
package struct MutationKey: Hashable, Sendable {
    package let id: MutationID
    @inlinable package init(_ id: MutationID) { self.id = id }
    @inlinable package func hash(into hasher: inout Hasher) { hasher.combine(id) }
    @inlinable package func _rawHashValue(seed: Int) -> Int {
        var x = id ^ UInt64(bitPattern: Int64(seed))
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: x ^ (x >> 32))
    }
}
