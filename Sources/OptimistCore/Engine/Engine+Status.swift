import OptimistModel
extension Engine {
    /// The live mutations (all, or those of one status), in id order.
    func liveMutations(status: MutationStatus?) -> [MutationRecord] {
        var out = [MutationRecord]()
        out.reserveCapacity(status == nil ? live.count : 16)
        for m in live.values where status == nil || m.record.status == status { out.append(m.record) }
        out.sort { $0.id < $1.id }
        return out
    }

    /// The record's layers: its pending chain folded on its confirmed value, as ``recompute``
    /// folds it; the visible value is the one reads return.
    func explain(_ collection: Key, _ key: Key) throws(OptimistError) -> Explanation {
        let confirmed = try stored(collection, key)
        guard let c = collections[collection] else {
            return Explanation(collection: collection, key: key, confirmed: confirmed, layers: [], visible: confirmed)
        }
        let chain = c.chains[key].map { $0.compactMap { live[MutationKey($0)]?.record } } ?? []
        var x = Explanation.fold(collection: collection, key: key, confirmed: confirmed, mutations: chain)
        x.visible = visible(c, key)
        return x
    }
}
