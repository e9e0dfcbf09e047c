import OptimistModel

/// `optimist dump FILE`: records as JSON lines, confirmed (as stored) or visible.
enum Dump {
    static func run(_ inv: Invocation, _ store: StoreReader) throws(CLIError) {
        guard inv.visible else {
            try store.records(collection: inv.collection, prefix: inv.prefix) { c, k, v throws(CLIError) in
                Output.json(line(c, k, v))
            }
            return
        }
        // Visible: the records the pending mutations touch (within the filter), folded, merged
        // in order into the stream of stored records.
        let mutations = try store.mutations()
        let prefix = Key(inv.prefix)
        var touched = Set<Address>()
        for m in mutations {
            for op in m.ops where (inv.collection.map { Key($0) == op.collection } ?? true) && op.key.hasBytePrefix(prefix) {
                touched.insert(Address(collection: op.collection, key: op.key))
            }
        }
        var pendingOnly = touched.sorted()
        var next = 0
        func emitPendingBefore(_ a: Address?) throws(CLIError) {
            while next < pendingOnly.count, a.map({ pendingOnly[next] < $0 }) ?? true {
                let p = pendingOnly[next]
                next += 1
                emit(p, confirmed: nil, mutations)
            }
        }
        try store.records(collection: inv.collection, prefix: inv.prefix) { c, k, v throws(CLIError) in
            let a = Address(collection: c, key: k)
            try emitPendingBefore(a)
            if next < pendingOnly.count && pendingOnly[next] == a {
                next += 1
                emit(a, confirmed: v, mutations)
            } else {
                Output.json(line(c, k, v, status: inv.visible ? "confirmed" : nil))
            }
        }
        try emitPendingBefore(nil)
        pendingOnly.removeAll()
    }

    struct Address: Hashable, Comparable {
        var collection: Key
        var key: Key
        static func < (a: Address, b: Address) -> Bool {
            a.collection != b.collection ? a.collection < b.collection : a.key < b.key
        }
    }

    /// A record with pending layers: its visible value (nothing when deleted) and status.
    static func emit(_ a: Address, confirmed: Record?, _ mutations: [MutationRecord]) {
        let x = Explanation.fold(collection: a.collection, key: a.key, confirmed: confirmed, mutations: mutations)
        guard let v = x.visible else { return }
        let status = x.layers.contains { $0.status == .failed } ? "failed" : "pending"
        Output.json(line(a.collection, a.key, v, status: status))
    }

    static func line(_ c: Key, _ k: Key, _ v: Record, status: String? = nil) -> JSON {
        var o: [Key: JSON] = ["coll": .string(c.string), "key": .string(k.string), "value": .object(v)]
        if let status { o["status"] = .string(status) }
        return .object(o)
    }
}
