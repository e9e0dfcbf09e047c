import OptimistCore
import OptimistModel

/// The live queries' model-based run, shared by the in-memory suite
/// (`LiveQueryModelTests`) and the store-file one: random sequences of mutate, commit,
/// rollback, server apply, fail and retry with several live queries open on one collection.
/// After every step, each query's rows must equal a brute-force evaluation of its spec over
/// the visible state (``expectedRows(_:_:)``, which shares nothing with the incremental
/// maintenance but the spec's own predicate and order functions), and a mirror built only from
/// the deltas its listener received must equal them too.
package enum LiveQueryRun {
    package static let specs: [String] = [
        #"{"collection": "a"}"#,
        #"{"collection": "a", "where": {"field": "n", "gt": 0}, "order": [{"field": "n", "desc": true}], "limit": 2}"#,
        #"{"collection": "a", "range": {"prefix": "k"}, "order": [{"field": "tag"}], "limit": 3}"#,
        #"{"collection": "a", "where": {"or": [{"status": "pending"}, {"status": "failed"}]}}"#,
        #"{"collection": "a", "where": {"status": "failed"}, "order": [{"field": "n"}]}"#,
        #"{"collection": "a", "range": {"from": "k2", "to": "x2"}, "order": [{"field": "n"}, {"field": "tag", "desc": true}]}"#,
        #"{"collection": "a", "where": {"not": {"field": "tag", "in": ["p0", "p1"]}}, "limit": 1}"#,
        #"{"collection": "a", "group": {"by": ["tag"], "aggregates": {"c": "count", "s": "sum:n", "avg": "avg:n", "lo": "min:n", "hi": "max:n"}}}"#,
        #"{"collection": "a", "where": {"field": "m", "exists": true}, "group": {"by": ["nested.x"], "aggregates": {"c": "count", "hi": "max:n"}}, "limit": 2}"#,
        #"{"collection": "a", "group": {"by": ["$key"]}}"#,
    ]

    /// Specs an index on `n`, `tag` or `nested.x` fits (see ``run(seed:steps:indexed:open:)``):
    /// every kind of `where` an index narrows, and a few it must not take for narrower than
    /// they are (a comparison with null, across kinds, a `not`).
    package static let indexedSpecs: [String] = [
        #"{"collection": "a", "where": {"field": "n", "eq": 1}}"#,
        #"{"collection": "a", "where": {"field": "n", "ge": 0}, "order": [{"field": "n", "desc": true}], "limit": 3}"#,
        #"{"collection": "a", "where": {"field": "n", "lt": 2}}"#,
        #"{"collection": "a", "where": {"field": "n", "gt": -1.5}, "order": [{"field": "tag"}]}"#,
        #"{"collection": "a", "where": {"field": "n", "le": "text"}}"#,
        #"{"collection": "a", "where": {"field": "n", "in": [1, "text", 3, 1.0]}}"#,
        #"{"collection": "a", "where": {"field": "tag", "prefix": "p"}, "order": [{"field": "n"}], "limit": 2}"#,
        #"{"collection": "a", "where": {"field": "tag", "prefix": ""}}"#,
        #"{"collection": "a", "where": {"and": [{"field": "tag", "in": ["p0", "p2"]}, {"status": "pending"}]}}"#,
        #"{"collection": "a", "where": {"or": [{"field": "tag", "eq": "p1"}, {"field": "tag", "ge": "p2"}]}}"#,
        #"{"collection": "a", "where": {"or": [{"field": "tag", "eq": "p1"}, {"field": "n", "eq": 2}]}}"#,
        #"{"collection": "a", "where": {"field": "n", "lt": null}}"#,
        #"{"collection": "a", "where": {"not": {"field": "n", "eq": 1}}}"#,
        #"{"collection": "a", "where": {"field": "nested.x", "ge": 0}, "group": {"by": ["tag"], "aggregates": {"c": "count", "hi": "max:n"}}}"#,
        #"{"collection": "a", "range": {"prefix": "k"}, "where": {"field": "nested.x", "in": [0, 1, 2, -1]}, "order": [{"field": "nested.x"}]}"#,
    ]

    /// A mirror of a query's rows, built from its deltas alone.
    package final class Mirror: @unchecked Sendable {
        var rows: [QueryRow]
        var deliveries = 0
        var emptyDeliveries = 0
        /// Deltas whose index was outside the rows they applied to.
        var badIndexes = 0
        /// Deliveries whose bytes (the C ABI's text) differ from the deltas' JSON.
        var badText = 0
        init(_ rows: [QueryRow]) { self.rows = rows }

        /// ``QueryDelta/apply(_:to:)``, with each index checked first (a wrong one is counted,
        /// where the real one would trap).
        func apply(_ deltas: [QueryDelta]) {
            for d in deltas {
                switch d {
                case .insert(let i, _): if i < 0 || i > rows.count { badIndexes += 1; continue }
                case .delete(let i), .update(let i, _): if i < 0 || i >= rows.count { badIndexes += 1; continue }
                }
                QueryDelta.apply([d], to: &rows)
            }
        }
    }

    /// With `indexed`, the store gets indexes on `n` (before any record), `tag` and
    /// `nested.x` (over the records there), and after any step a query of ``indexedSpecs``
    /// may open: its first evaluation then reads through an index, over whatever confirmed,
    /// pending, failed and staged state the run has reached, and is checked like the rest.
    package static func run(seed: Int, steps: Int, indexed: Bool = false, open: () throws -> Store) throws -> [String] {
        var g = SeededRandom(seed: UInt64(seed) &* 104_729 &+ 3)
        let s = try open()
        if indexed { try s.defineIndex(collection: "a", field: FieldPath("n")) }
        // Some records before the queries open (their first evaluation), some after.
        for _ in 0..<Int.random(in: 0...6, using: &g) { try? s.serverApply([ModelRun.randomOp(&g)]) }
        if indexed {
            try s.defineIndex(collection: "a", field: FieldPath("tag"))
            try s.defineIndex(collection: "a", field: FieldPath("nested.x"))
            try s.defineIndex(collection: "a", field: FieldPath("tag"))  // idempotent
        }
        var queries = [(LiveQuery, Mirror)]()
        func openQuery(_ text: String) throws {
            let q = try s.query(json: text)
            let mirror = Mirror(try q.rows())
            try q.subscribe { deltas in
                mirror.deliveries += 1
                if String(decoding: QueryDelta.jsonBytes(deltas), as: UTF8.self) != JSONWriter.string(.array(deltas.map(\.json))) {
                    mirror.badText += 1
                }
                if deltas.isEmpty { mirror.emptyDeliveries += 1 }
                mirror.apply(deltas)
            }
            queries.append((q, mirror))
        }
        for text in specs { try openQuery(text) }
        var live = [MutationID]()
        var problems = [String]()
        for step in 0..<steps {
            let at = "seed \(seed) step \(step)"
            var what = ""
            switch Int.random(in: 0..<12, using: &g) {
            case 0...3:
                let policy: FailurePolicy = Bool.random(using: &g) ? .keep : .rollback
                if let id = try? s.mutate(ModelRun.randomOps(&g), policy: policy) { live.append(id) }
                what = "mutate"
            case 4...5:
                guard let id = live.randomElement(using: &g) else { continue }
                let server: [Op]? = Bool.random(using: &g) ? ModelRun.randomOps(&g) : nil
                _ = try? s.commit(id, serverOps: server)
                what = "commit \(id)"
            case 6:
                guard let id = live.randomElement(using: &g) else { continue }
                _ = try? s.rollback(id)
                what = "rollback \(id)"
            case 7...8:
                _ = try? s.serverApply(ModelRun.randomOps(&g))
                what = "server"
            case 9...10:
                guard let id = live.randomElement(using: &g) else { continue }
                _ = try? s.fail(id, transient: false, reason: "refused", now: 0)
                what = "fail \(id)"
            default:
                guard let id = live.randomElement(using: &g) else { continue }
                _ = try? s.retry(id)
                what = "retry \(id)"
            }
            live.removeAll { id in
                guard let st = try? s.status(id) else { return true }
                return st == .committed || st == .rolledBack
            }
            if indexed, queries.count < specs.count + 12, Int.random(in: 0..<4, using: &g) == 0 {
                try openQuery(indexedSpecs.randomElement(using: &g)!)
            }
            for (i, (q, mirror)) in queries.enumerated() {
                let rows = try q.rows()
                let want = try expectedRows(s, q.spec)
                if rows != want { problems.append("\(at) (\(what)): query \(i) rows \(describe(rows)) vs \(describe(want))") }
                if mirror.rows != want { problems.append("\(at) (\(what)): query \(i) mirror \(describe(mirror.rows)) vs \(describe(want))") }
                if try q.count() != want.count { problems.append("\(at): query \(i) count") }
                // The C ABI's text, written straight into bytes, is the rows' canonical JSON.
                if String(decoding: QueryRow.jsonBytes(rows), as: UTF8.self) != JSONWriter.string(.array(rows.map(\.json))) {
                    problems.append("\(at): query \(i) rows' bytes differ from their JSON")
                }
                if mirror.emptyDeliveries > 0 { problems.append("\(at): query \(i) got an empty delivery") }
                if mirror.badText > 0 { problems.append("\(at): query \(i) deltas' bytes differ from their JSON") }
                if mirror.badIndexes > 0 { problems.append("\(at): query \(i) got \(mirror.badIndexes) deltas with a wrong index") }
            }
            if problems.count > 10 { break }
        }
        // The steps ignore their own failures (a refused op is part of the run), so a store
        // file's writer that failed would go unseen: the flush reports it.
        do { try s.flush() } catch { problems.append("seed \(seed): flush failed: \(error)") }
        try s.close()
        return problems
    }

    static func describe(_ rows: [QueryRow]) -> String {
        "[" + rows.map { JSONWriter.string($0.json) }.joined(separator: ", ") + "]"
    }

    /// The query's result over the visible state, computed from scratch: every record of the
    /// collection read, filtered, sorted (or grouped, with the aggregates summed here), cut.
    package static func expectedRows(_ s: Store, _ spec: QuerySpec) throws -> [QueryRow] {
        var matching = [(key: Key, value: Record, status: RecordStatus)]()
        for (key, value) in try s.scan(spec.collection) {
            let status = try s.recordStatus(spec.collection, key)
            if spec.range?.contains(key) ?? true, spec.matches(key: key, record: value, status: status) {
                matching.append((key, value, status))
            }
        }
        let limit = spec.limit ?? Int.max
        guard let group = spec.group else {
            let sorted = matching.sorted {
                spec.compareRows((spec.sortValues($0.value, key: $0.key), $0.key), (spec.sortValues($1.value, key: $1.key), $1.key)) < 0
            }
            return sorted.prefix(limit).map { QueryRow.record(key: $0.key, value: $0.value, status: $0.status) }
        }
        var members = [[JSON]: [(key: Key, value: Record)]]()
        for r in matching { members[spec.groupValues(r.value, key: r.key), default: []].append((r.key, r.value)) }
        let tuples = members.keys.sorted { QuerySpec.compareGroups($0, $1) < 0 }
        return tuples.prefix(limit).map { tuple in
            var named = [Key: JSON]()
            for (path, v) in zip(group.by, tuple) { named[Key(path.text)] = v }
            var values = [Key: JSON]()
            let records = members[tuple]!
            for a in group.aggregates {
                values[Key(a.name)] = aggregate(a.kind, records)
            }
            return QueryRow.group(group: named, values: values)
        }
    }

    static func aggregate(_ kind: QueryAggregateKind, _ records: [(key: Key, value: Record)]) -> JSON {
        func present(_ path: FieldPath) -> [JSON] {
            records.compactMap { path.value(in: $0.value, key: $0.key) }.filter { $0 != .null }
        }
        switch kind {
        case .count: return .number(Double(records.count))
        case .sum(let path): return .number(present(path).compactMap(\.number).reduce(0, +))
        case .avg(let path):
            let n = present(path).compactMap(\.number)
            return n.isEmpty ? .null : .number(n.reduce(0, +) / Double(n.count))
        case .min(let path): return present(path).min { QueryOrder.compare($0, $1) < 0 } ?? .null
        case .max(let path): return present(path).max { QueryOrder.compare($0, $1) < 0 } ?? .null
        }
    }
}
