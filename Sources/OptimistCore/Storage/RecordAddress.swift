import OptimistModel
/// A record's address: its collection and key.
package struct RecordAddress: Hashable, Sendable {
    package var collection: Key
    package var key: Key

    package init(collection: Key, key: Key) {
        self.collection = collection
        self.key = key
    }

    // Both keys carry their byte hash: combine those rather than hash the bytes again.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(collection.bytesHash &* 31 &+ key.bytesHash)
    }

    /// Dictionaries of addresses (the cache, the unwritten records, a call's touched
    /// records) hash on every lookup; with the keys' hashes cached, a seeded mix of the two
    /// (as ``Key`` does) is enough, where `hash(into:)` would pay a full SipHash round.
    package func _rawHashValue(seed: Int) -> Int {
        var x = (collection.bytesHash &* 31 &+ key.bytesHash) ^ UInt64(bitPattern: Int64(seed))
        x = (x ^ (x >> 33)) &* 0xff51_afd7_ed55_8ccd
        x = (x ^ (x >> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return Int(truncatingIfNeeded: x ^ (x >> 33))
    }
}
