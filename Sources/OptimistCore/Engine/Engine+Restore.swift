/// Everything a store persists: what a persistence layer loads to reopen a store.
public struct StoreSnapshot: Sendable {
    public var clientID: String
    /// The next mutation id to hand out (never below any id ever handed out).
    public var nextID: MutationID
    public var confirmed: [(collection: Key, key: Key, value: Record)]
    /// Live mutations, in id order.
    public var mutations: [MutationRecord]
    /// How ended mutations ended.
    public var ended: [(id: MutationID, status: MutationStatus)]
    public var loaded: [(collection: Key, range: LoadedRange)]
    /// The sync's pull cursor, nil before the first pull.
    public var syncCursor: String?

    public init(clientID: String, nextID: MutationID = 1,
                confirmed: [(collection: Key, key: Key, value: Record)] = [],
                mutations: [MutationRecord] = [], ended: [(id: MutationID, status: MutationStatus)] = [],
                loaded: [(collection: Key, range: LoadedRange)] = [], syncCursor: String? = nil) {
        self.clientID = clientID
        self.nextID = nextID
        self.confirmed = confirmed
        self.mutations = mutations
        self.ended = ended
        self.loaded = loaded
        self.syncCursor = syncCursor
    }
}

extension Engine {
    /// Rebuilds `V = fold(P, C)` from a snapshot. Inflight mutations come back pending:
    /// the process that sent them is gone, so they are sent again (same client and mutation
    /// id, so the server can drop the duplicate).
    convenience init(restoring s: StoreSnapshot, journaling: Bool) {
        self.init(clientID: s.clientID, journaling: journaling)
        for (coll, key, value) in s.confirmed {
            let c = collection(coll)
            c.confirmed[key] = value
            c.visible[key] = value
            c.index.insert(key)
        }
        var maxID: MutationID = 0
        // Loaders hand mutations over in id order; sort only when one did not.
        let inOrder = zip(s.mutations, s.mutations.dropFirst()).allSatisfy { $0.id < $1.id }
        live.reserveCapacity(s.mutations.count)
        due.reserveCapacity(s.mutations.count)
        for var r in inOrder ? s.mutations : s.mutations.sorted(by: { $0.id < $1.id }) {
            maxID = max(maxID, r.id)
            if r.status == .inflight { r.status = .pending }
            guard r.status.isLive else { continue }
            let m = LiveMutation(record: r)
            live[MutationKey(r.id)] = m
            for a in m.touched {
                collection(a.collection).chains[a.key, default: PendingChain()].append(r.id)
            }
            if let results = try? evaluate(r.ops, on: { c, k in c.visible[k] }, skipFailing: true) {
                for (c, key, value) in results { setVisible(c, key, value) }
            }
            if r.status == .pending { due.append(DueEntry(r)) }
            if let k = r.dedupeKey { dedupe[k] = r.id }
        }
        for (id, status) in s.ended {
            maxID = max(maxID, id)
            ended.insert(id, status)
        }
        for (coll, range) in s.loaded { freshness[coll, default: Freshness()].mark(range) }
        // Retried mutations sit after the others; the loader's id order is not send order.
        if due.count > 1 && !zip(due, due.dropFirst()).allSatisfy({ $0.0 < $0.1 }) { due.sort() }
        syncCursor = s.syncCursor
        nextID = max(s.nextID, maxID + 1)
    }
}
