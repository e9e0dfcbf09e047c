import OptimistCore
import OptimistModel

/// A deliberately naive implementation of the model of docs/concepts.md: it keeps `C` and the list `P`
/// and recomputes `V = fold(P, C)` from scratch on every read.
package struct NaiveModel {
    package struct Pending { package var id: MutationID; package var ops: [Op] }
    package var confirmed: [RecordAddress: Record] = [:]
    package var pending: [Pending] = []
    package var ended: [MutationID: MutationStatus] = [:]
    package var nextID: MutationID = 1

    package init() {}

    /// Applies ops to a state; strict: any op that fails rejects all.
    package static func apply(_ ops: [Op], to state: [RecordAddress: Record], strict: Bool) -> [RecordAddress: Record]? {
        var s = state
        for op in ops {
            let a = RecordAddress(collection: op.collection, key: op.key)
            switch op.apply(to: s[a]) {
            case .success(let r): s[a] = r
            case .failure: if strict { return nil }
            }
        }
        return s
    }

    package var visible: [RecordAddress: Record] {
        var v = confirmed
        for m in pending { v = Self.apply(m.ops, to: v, strict: false)! }
        return v
    }

    package func isPending(_ a: RecordAddress) -> Bool {
        pending.contains { m in m.ops.contains { $0.collection == a.collection && $0.key == a.key } }
    }

    package mutating func mutate(_ ops: [Op]) -> MutationID? {
        guard Self.apply(ops, to: visible, strict: true) != nil else { return nil }
        defer { nextID += 1 }
        pending.append(Pending(id: nextID, ops: ops))
        return nextID
    }

    package mutating func commit(_ id: MutationID, serverOps: [Op]?) -> Bool {
        guard let i = pending.firstIndex(where: { $0.id == id }) else { return false }
        if let serverOps {
            guard let c = Self.apply(serverOps, to: confirmed, strict: true) else { return false }
            confirmed = c
        } else {
            confirmed = Self.apply(pending[i].ops, to: confirmed, strict: false)!
        }
        pending.remove(at: i)
        ended[id] = .committed
        return true
    }

    package mutating func rollback(_ id: MutationID) -> Bool {
        guard let i = pending.firstIndex(where: { $0.id == id }) else { return false }
        pending.remove(at: i)
        ended[id] = .rolledBack
        return true
    }

    package mutating func serverApply(_ ops: [Op]) -> Bool {
        guard let c = Self.apply(ops, to: confirmed, strict: true) else { return false }
        confirmed = c
        return true
    }
}
