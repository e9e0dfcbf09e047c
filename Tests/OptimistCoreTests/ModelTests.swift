import Testing
@testable import OptimistCore

/// A deliberately naive implementation of the contract's model: it keeps `C` and the list `P`
/// and recomputes `V = fold(P, C)` from scratch on every read.
struct NaiveModel {
    struct Pending { var id: MutationID; var ops: [Op] }
    var confirmed: [RecordAddress: Record] = [:]
    var pending: [Pending] = []
    var ended: [MutationID: MutationStatus] = [:]
    var nextID: MutationID = 1

    /// Applies ops to a state; strict: any op that fails rejects all.
    static func apply(_ ops: [Op], to state: [RecordAddress: Record], strict: Bool) -> [RecordAddress: Record]? {
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

    var visible: [RecordAddress: Record] {
        var v = confirmed
        for m in pending { v = Self.apply(m.ops, to: v, strict: false)! }
        return v
    }

    func isPending(_ a: RecordAddress) -> Bool {
        pending.contains { m in m.ops.contains { $0.collection == a.collection && $0.key == a.key } }
    }

    mutating func mutate(_ ops: [Op]) -> MutationID? {
        guard Self.apply(ops, to: visible, strict: true) != nil else { return nil }
        defer { nextID += 1 }
        pending.append(Pending(id: nextID, ops: ops))
        return nextID
    }

    mutating func commit(_ id: MutationID, serverOps: [Op]?) -> Bool {
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

    mutating func rollback(_ id: MutationID) -> Bool {
        guard let i = pending.firstIndex(where: { $0.id == id }) else { return false }
        pending.remove(at: i)
        ended[id] = .rolledBack
        return true
    }

    mutating func serverApply(_ ops: [Op]) -> Bool {
        guard let c = Self.apply(ops, to: confirmed, strict: true) else { return false }
        confirmed = c
        return true
    }
}

@Suite struct ModelTests {
    static let collections: [Key] = ["a", "b"]
    static let keys: [Key] = ["k1", "k2", "k3", "k4"]

    static func randomOp(_ g: inout SeededRandom) -> Op {
        let c = collections.randomElement(using: &g)!, k = keys.randomElement(using: &g)!
        let n = JSON.number(Double(Int.random(in: -5...5, using: &g)))
        switch Int.random(in: 0..<10, using: &g) {
        case 0...2:
            // Now and then a non-number, so incr can fail and the re-application rule matters.
            let value: JSON = Int.random(in: 0..<6, using: &g) == 0 ? "text" : n
            return put(c, k, ["n": value, "tag": .string("p\(Int.random(in: 0..<3, using: &g))")])
        case 3...4:
            return Bool.random(using: &g) ? patch(c, k, ["tag": nil]) : patch(c, k, ["m": n, "nested": ["x": n]])
        case 5:
            return delete(c, k)
        default:
            return incr(c, k, "n", Double(Int.random(in: 1...3, using: &g)))
        }
    }

    static func randomOps(_ g: inout SeededRandom) -> [Op] {
        (0..<Int.random(in: 1...3, using: &g)).map { _ in randomOp(&g) }
    }

    func check(_ s: Store, _ m: NaiveModel, seed: UInt64, step: Int) throws {
        let v = m.visible
        for c in Self.collections {
            for k in Self.keys {
                let a = RecordAddress(collection: c, key: k)
                let got = try s.get(c, k), want = v[a]
                #expect(got == want, "seed \(seed) step \(step): V[\(c)/\(k)]")
                #expect(try s.confirmed(c, k) == m.confirmed[a], "seed \(seed) step \(step): C[\(c)/\(k)]")
                #expect(try s.isPending(c, k) == m.isPending(a), "seed \(seed) step \(step): pending \(c)/\(k)")
            }
            let scanned = try s.scan(c).map(\.key)
            let expected = v.keys.filter { $0.collection == c }.map(\.key).sorted()
            #expect(scanned == expected, "seed \(seed) step \(step): scan \(c)")
            #expect(try s.viewValue("count-\(c)") == Double(expected.count))
        }
        #expect(try s.pendingCount() == m.pending.count)
    }

    @Test(arguments: 0..<1000)
    func randomSequencesMatchTheNaiveModel(seed: Int) throws {
        var g = SeededRandom(seed: UInt64(seed) &* 7919 &+ 1)
        let s = Store()
        for c in Self.collections { try s.defineView("count-\(c)", collection: c, kind: .count) }
        var m = NaiveModel()
        for step in 0..<80 {
            switch Int.random(in: 0..<10, using: &g) {
            case 0...3:
                let ops = Self.randomOps(&g)
                let want = m.mutate(ops)
                let got = try? s.mutate(ops)
                #expect(got == want, "seed \(seed) step \(step): mutate")
            case 4...5:
                guard let p = m.pending.randomElement(using: &g) else { continue }
                let server: [Op]? = Bool.random(using: &g) ? Self.randomOps(&g) : nil
                let ok = m.commit(p.id, serverOps: server)
                #expect(((try? s.commit(p.id, serverOps: server)) != nil) == ok, "seed \(seed) step \(step): commit")
            case 6...7:
                guard let p = m.pending.randomElement(using: &g) else { continue }
                _ = m.rollback(p.id)
                try s.rollback(p.id)
            case 8:
                let ops = Self.randomOps(&g)
                let ok = m.serverApply(ops)
                #expect(((try? s.serverApply(ops)) != nil) == ok, "seed \(seed) step \(step): server")
            default:
                // An ended id: both commit and rollback report STATE and change nothing.
                guard let (id, status) = m.ended.randomElement(using: &g) else { continue }
                #expect(throws: OptimistError.self) { try s.commit(id) }
                #expect(try s.status(id) == status)
            }
            try check(s, m, seed: UInt64(seed), step: step)
        }
    }
}
