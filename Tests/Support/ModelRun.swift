import OptimistCore
import OptimistModel

/// Random sequences of store calls checked against ``NaiveModel`` after every step: the
/// model-based test, shared by the in-memory and the file-backed suites.
package enum ModelRun {
    package static let collections: [Key] = ["a", "b"]
    package static let keys: [Key] = ["k1", "k2", "k3", "k4", "x1", "x2"]

    package static func randomOp(_ g: inout SeededRandom) -> Op {
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

    package static func randomOps(_ g: inout SeededRandom) -> [Op] {
        (0..<Int.random(in: 1...3, using: &g)).map { _ in randomOp(&g) }
    }

    /// The views every run defines (and checks): a count and a sum per collection, and a
    /// count over the keys starting with "k".
    static func defineViews(_ s: Store) throws {
        for c in collections {
            try s.defineView("count-\(c)", collection: c, kind: .count)
            try s.defineView("sum-\(c)", collection: c, kind: .sum(field: "n"))
            try s.defineView("k-\(c)", collection: c, prefix: "k", kind: .count)
        }
    }

    /// Differences between the store and the model, described.
    static func differences(_ s: Store, _ m: NaiveModel, _ at: String) throws -> [String] {
        var out = [String]()
        let v = m.visible
        for c in collections {
            for k in keys {
                let a = RecordAddress(collection: c, key: k)
                if try s.get(c, k) != v[a] { out.append("\(at): V[\(c)/\(k)]") }
                if try s.confirmed(c, k) != m.confirmed[a] { out.append("\(at): C[\(c)/\(k)]") }
                if try s.isPending(c, k) != m.isPending(a) { out.append("\(at): pending \(c)/\(k)") }
            }
            let expected = v.filter { $0.key.collection == c }.sorted { $0.key.key < $1.key.key }
            let scanned = try s.scan(c)
            if scanned.map(\.key) != expected.map(\.key.key) || scanned.map(\.value) != expected.map(\.value) {
                out.append("\(at): scan \(c) \(scanned.map(\.key)) vs \(expected.map(\.key.key))")
            }
            let limited = try s.scan(c, prefix: "k", limit: 2).map(\.key)
            let wantLimited = Array(expected.map(\.key.key).filter { $0.hasBytePrefix("k") }.prefix(2))
            if limited != wantLimited { out.append("\(at): scan \(c) k* limit 2 \(limited) vs \(wantLimited)") }
            if try s.viewValue("count-\(c)") != Double(expected.count) { out.append("\(at): count-\(c)") }
            let sum = expected.reduce(0.0) { $0 + ($1.value["n"]?.number ?? 0) }
            if try s.viewValue("sum-\(c)") != sum { out.append("\(at): sum-\(c) \(try s.viewValue("sum-\(c)")) vs \(sum)") }
            let kCount = expected.filter { $0.key.key.hasBytePrefix("k") }.count
            if try s.viewValue("k-\(c)") != Double(kCount) { out.append("\(at): k-\(c)") }
        }
        if try s.pendingCount() != m.pending.count { out.append("\(at): pending count") }
        return out
    }

    /// Runs `steps` random calls on the store `open` makes (checking after each), closing and
    /// reopening it every `reopenEvery` steps when given (a file-backed store: the reopened
    /// store must show the same state, views included). `afterStep` sees the store after
    /// every step (a cache check). Returns the differences found (empty: the run passed).
    package static func run(seed: Int, steps: Int, reopenEvery: Int? = nil, open: () throws -> Store,
                            afterStep: (Store) throws -> [String] = { _ in [] }) throws -> [String] {
        var g = SeededRandom(seed: UInt64(seed) &* 7919 &+ 1)
        var s = try open()
        try defineViews(s)
        var m = NaiveModel()
        var problems = [String]()
        for step in 0..<steps {
            let at = "seed \(seed) step \(step)"
            switch Int.random(in: 0..<10, using: &g) {
            case 0...3:
                let ops = randomOps(&g)
                let want = m.mutate(ops)
                let got = try? s.mutate(ops)
                if got != want { problems.append("\(at): mutate \(String(describing: got)) vs \(String(describing: want))") }
            case 4...5:
                guard let p = m.pending.randomElement(using: &g) else { continue }
                let server: [Op]? = Bool.random(using: &g) ? randomOps(&g) : nil
                let ok = m.commit(p.id, serverOps: server)
                if ((try? s.commit(p.id, serverOps: server)) != nil) != ok { problems.append("\(at): commit") }
            case 6...7:
                guard let p = m.pending.randomElement(using: &g) else { continue }
                _ = m.rollback(p.id)
                try s.rollback(p.id)
            case 8:
                let ops = randomOps(&g)
                let ok = m.serverApply(ops)
                if ((try? s.serverApply(ops)) != nil) != ok { problems.append("\(at): server") }
            default:
                // An ended id: commit reports STATE and changes nothing.
                guard let (id, status) = m.ended.randomElement(using: &g) else { continue }
                if (try? s.commit(id)) != nil { problems.append("\(at): commit of an ended id") }
                if try s.status(id) != status { problems.append("\(at): status") }
            }
            if let every = reopenEvery, step % every == every - 1 {
                try s.close()
                s = try open()
            }
            problems += try differences(s, m, at)
            problems += try afterStep(s)
            if problems.count > 20 { break }
        }
        try s.close()
        return problems
    }
}
