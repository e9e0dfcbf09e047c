import OptimistModel
/// A big server change's confirmed records, published over the storage in one step.
///
/// A batch of thousands of records cannot be written into the storage in the moment readers
/// may be kept waiting, so the writer builds the batch's records here first, outside the
/// store's state lock, and publishes the whole layer by setting one reference
/// (``Engine/layer``): from then on every read of confirmed state looks here before the
/// storage. The writer then moves the records into the storage a chunk at a time, each chunk
/// under the lock; while it does, the layer still answers for those keys, so readers see the
/// same values throughout. Once all are in, the layer goes (again one step).
///
/// Immutable once published, so readers share it without copying.
final class ConfirmedLayer {
    /// The batch's confirmed values (nil: deleted).
    let values: [RecordAddress: Record?]
    /// Per collection, the layer's keys in byte order, for scans.
    let sortedKeys: [Key: [Key]]

    init(_ records: [(CollectionState, Key, Record?)]) {
        var values = [RecordAddress: Record?](minimumCapacity: records.count)
        var keys = [Key: [Key]]()
        for (c, key, value) in records {
            values[RecordAddress(collection: c.name, key: key)] = value
            keys[c.name, default: []].append(key)
        }
        // A pull's changes come in key order: checked in one pass, sorted only when not.
        for name in Array(keys.keys) where !Self.isSorted(keys[name]!) { keys[name]!.sort() }
        self.values = values
        sortedKeys = keys
    }

    static func isSorted(_ keys: [Key]) -> Bool {
        var i = 1
        while i < keys.count {
            if keys[i] < keys[i - 1] { return false }
            i += 1
        }
        return true
    }

    /// The value the layer holds for the record: nil when the layer does not have it,
    /// `.some(nil)` when it deletes it.
    @inline(__always) func value(_ collection: Key, _ key: Key) -> Record?? {
        values[RecordAddress(collection: collection, key: key)]
    }

    /// The layer's keys of `collection` under `prefix` that sort after `after`, in order.
    func keys(_ collection: Key, prefix: Key, after: Key?) -> ArraySlice<Key> {
        guard let sorted = sortedKeys[collection] else { return [] }
        var lo = 0, hi = sorted.count
        let from = after.map { $0 < prefix ? prefix : $0 } ?? prefix
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < from { lo = mid + 1 } else { hi = mid }
        }
        if let after, lo < sorted.count, sorted[lo] == after { lo += 1 }
        var end = lo
        while end < sorted.count, sorted[end].hasBytePrefix(prefix) { end += 1 }
        return sorted[lo..<end]
    }
}

extension Engine {
    /// `C[collection][key]`: the published layer's value if it has the key, else the storage's.
    @inline(__always) func stored(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        if layer != nil, let v = layer!.value(collection, key) { return v }
        return try storage.record(collection, key)
    }

    /// ``ConfirmedStorage/scan(_:prefix:after:limit:)`` with the published layer merged over
    /// the storage's rows: where both have a key, the layer's value (or its delete) wins.
    func storedScan(_ collection: Key, prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
        guard let layer, layer.sortedKeys[collection] != nil else {
            return try storage.scan(collection, prefix: prefix, after: after, limit: limit)
        }
        return try scanMerging(layer.keys(collection, prefix: prefix, after: after),
                               value: { layer.value(collection, $0) ?? nil }, after: after, limit: limit) {
            (from, limit) throws(OptimistError) in try storage.scan(collection, prefix: prefix, after: from, limit: limit)
        }
    }
}
