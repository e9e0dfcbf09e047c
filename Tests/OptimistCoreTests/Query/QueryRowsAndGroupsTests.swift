import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct QueryRowsAndGroupsTests {
    @Test func rangeContains() {
        let p = QueryRange.prefix("2026-11-")
        #expect(p.contains("2026-11-01") && p.contains("2026-11-") && !p.contains("2026-12-01") && !p.contains("2026-11"))
        let b = QueryRange.between(from: "b", to: "d")
        #expect(b.contains("b") && b.contains("c") && b.contains("czzz") && !b.contains("d") && !b.contains("a") && !b.contains("B"))
        #expect(QueryRange.between(from: "b", to: nil).contains("zzz") && !QueryRange.between(from: "b", to: nil).contains("a"))
        #expect(QueryRange.between(from: nil, to: "b").contains("") && !QueryRange.between(from: nil, to: "b").contains("b"))
        #expect(!QueryRange.between(from: "d", to: "b").contains("c"))  // an empty range
        #expect(QueryRange.prefix("é").contains("éa") && !QueryRange.prefix("e").contains("é"))  // bytes
    }

    @Test func specMatchesRangeAndPredicate() throws {
        let spec = try QuerySpec(parsing: #"{"collection": "logs", "range": {"prefix": "2026-11-"}, "where": {"field": "habit", "eq": "run"}}"#)
        #expect(spec.matches(key: "2026-11-02", record: ["habit": "run"], status: .confirmed))
        #expect(!spec.matches(key: "2026-12-02", record: ["habit": "run"], status: .confirmed))
        #expect(!spec.matches(key: "2026-11-02", record: ["habit": "read"], status: .confirmed))
        let failed = try QuerySpec(parsing: #"{"collection": "m", "where": {"status": "failed"}}"#)
        #expect(failed.readsStatus)
        #expect(failed.matches(key: "a", record: [:], status: .failed) && !failed.matches(key: "a", record: [:], status: .pending))
        #expect(try QuerySpec(collection: "m").matches(key: "any", record: [:], status: .pending))
    }

    @Test func rowsOrderByItemsThenKey() throws {
        let spec = try QuerySpec(parsing: #"{"collection": "logs", "order": [{"field": "day", "desc": true}, {"field": "minutes"}]}"#)
        let rows: [(Key, Record)] = [
            ("a", ["day": "2026-11-02", "minutes": 30]),
            ("b", ["day": "2026-11-03", "minutes": 10]),
            ("c", ["day": "2026-11-02", "minutes": 10]),
            ("d", ["day": "2026-11-02", "minutes": 10]),  // ties c on both: key decides
            ("e", ["minutes": 5]),  // no day: missing is least, so last when descending
            ("f", ["day": .null, "minutes": 1]),  // null after missing, before any string
        ]
        let sorted = rows.map { (values: spec.sortValues($0.1, key: $0.0), key: $0.0) }
            .sorted { spec.compareRows($0, $1) < 0 }
        #expect(sorted.map(\.key) == ["b", "c", "d", "a", "f", "e"])
        #expect(spec.sortValues(["minutes": 5], key: "e") == [nil, 5])
        let c = (values: spec.sortValues(rows[2].1, key: "c"), key: Key("c"))
        #expect(spec.compareRows(c, c) == 0)
        #expect(spec.compareRows(c, (values: c.values, key: "d")) == -1)
        #expect(spec.compareRows((values: c.values, key: "d"), c) == 1)
        // Without order: key order.
        let plain = try QuerySpec(collection: "logs")
        #expect(plain.sortValues(["x": 1], key: "k").isEmpty)
        #expect(plain.compareRows((values: [], key: "a"), (values: [], key: "b")) == -1)
        // Descending by key, through "$key".
        let byKey = try QuerySpec(collection: "logs", order: [QueryOrderItem(field: .key, descending: true)])
        #expect(byKey.compareRows((byKey.sortValues([:], key: "a"), "a"), (byKey.sortValues([:], key: "b"), "b")) == 1)
    }

    @Test func groupValuesAndOrder() throws {
        let spec = try QuerySpec(parsing: #"{"collection": "logs", "group": {"by": ["habit", "meta.place"]}}"#)
        #expect(spec.groupValues(["habit": "run", "meta": ["place": "park"]], key: "k") == ["run", "park"])
        // Missing and null are one group value: null.
        #expect(spec.groupValues(["habit": "run"], key: "k") == ["run", .null])
        #expect(spec.groupValues(["habit": "run", "meta": ["place": .null]], key: "k") == ["run", .null])
        #expect(spec.groupValues(["habit": "run", "meta": "flat"], key: "k") == ["run", .null])
        #expect(QuerySpec.compareGroups(["run", .null], ["run", "park"]) == -1)
        #expect(QuerySpec.compareGroups(["read", "z"], ["run", "a"]) == -1)
        #expect(QuerySpec.compareGroups([1], [1.0]) == 0)
        #expect(QuerySpec.compareGroups([2], [1, 5]) == 1)
        #expect(QuerySpec.compareGroups([.null], [false]) == -1)
        #expect(try QuerySpec(collection: "logs").groupValues(["habit": "run"], key: "k").isEmpty)
    }

    let aggregates: [QueryAggregate] = QueryGroup(by: [FieldPath("habit")], aggregates: [
        QueryAggregate(name: "n", kind: .count), QueryAggregate(name: "total", kind: .sum(FieldPath("minutes"))),
        QueryAggregate(name: "avg", kind: .avg(FieldPath("minutes"))), QueryAggregate(name: "first", kind: .min(FieldPath("day"))),
        QueryAggregate(name: "last", kind: .max(FieldPath("day"))), QueryAggregate(name: "top", kind: .max(FieldPath("minutes"))),
    ]).aggregates

    func contribution(_ r: Record, _ key: Key = "k") -> [JSON?] { GroupAccumulator.contribution(of: r, key: key, aggregates: aggregates) }

    @Test func emptyGroup() {
        let g = GroupAccumulator(aggregates)
        #expect(g.count == 0)
        #expect(g.values == ["n": 0, "total": 0, "avg": .null, "first": .null, "last": .null, "top": .null])
    }

    @Test func addAndRemove() {
        var g = GroupAccumulator(aggregates)
        let a = contribution(["minutes": 30, "day": "2026-11-02"])
        let b = contribution(["minutes": 10, "day": "2026-11-05"])
        let c = contribution(["minutes": "lots", "day": .null])  // not numeric, null day
        let d = contribution([:])  // nothing at all
        for x in [a, b, c, d] { g.add(x) }
        #expect(g.count == 4)
        #expect(g.values == ["n": 4, "total": 40, "avg": 20, "first": "2026-11-02", "last": "2026-11-05", "top": "lots"])
        g.remove(b)  // the max day leaves
        #expect(g.values == ["n": 3, "total": 30, "avg": 30, "first": "2026-11-02", "last": "2026-11-02", "top": "lots"])
        g.remove(c)
        #expect(g.values["top"] == 30)
        g.remove(a)  // the last numeric value leaves: sum of none 0, avg of none null
        #expect(g.values == ["n": 1, "total": 0, "avg": .null, "first": .null, "last": .null, "top": .null])
        g.remove(d)
        #expect(g.count == 0)
        #expect(g.values == GroupAccumulator(aggregates).values)
    }

    @Test func extremesWithTies() {
        var g = GroupAccumulator(aggregates)
        let low1 = contribution(["day": "a", "minutes": 1])
        let low2 = contribution(["day": "a", "minutes": 1.0])
        let high = contribution(["day": "c", "minutes": 9])
        g.add(low1); g.add(low2); g.add(high)
        #expect(g.values["first"] == "a" && g.values["last"] == "c")
        g.remove(low1)  // one copy of the least leaves: the other still holds it
        #expect(g.values["first"] == "a")
        g.remove(high)
        #expect(g.values["last"] == "a" && g.values["top"] == 1)
        g.remove(low2)
        #expect(g.values["first"] == .null && g.values["last"] == .null)
        g.remove(low2)  // removing what is not there changes no extreme
        #expect(g.values["first"] == .null)
    }

    @Test func extremesUseTheTotalOrder() {
        let mm = [QueryAggregate(name: "lo", kind: .min(FieldPath("v"))), QueryAggregate(name: "hi", kind: .max(FieldPath("v")))]
        var g = GroupAccumulator(mm)
        let values: [JSON] = [.null, false, 3, "x", [1], ["a": 1]]
        for v in values { g.add(GroupAccumulator.contribution(of: ["v": v], key: "k", aggregates: mm)) }
        #expect(g.values == ["lo": false, "hi": ["a": 1]])  // null is left out
        g.remove(GroupAccumulator.contribution(of: ["v": ["a": 1]], key: "k", aggregates: mm))
        g.remove(GroupAccumulator.contribution(of: ["v": false], key: "k", aggregates: mm))
        #expect(g.values == ["lo": 3, "hi": [1]])
        // min over the key.
        let byKey = [QueryAggregate(name: "first", kind: .min(.key))]
        var k = GroupAccumulator(byKey)
        for key: Key in ["b", "a", "c"] { k.add(GroupAccumulator.contribution(of: [:], key: key, aggregates: byKey)) }
        #expect(k.values == ["first": "a"])
    }

    @Test func sumsStayExactAcrossRemovals() {
        let s = [QueryAggregate(name: "s", kind: .sum(FieldPath("v"))), QueryAggregate(name: "a", kind: .avg(FieldPath("v")))]
        func c(_ v: JSON) -> [JSON?] { GroupAccumulator.contribution(of: ["v": v], key: "k", aggregates: s) }
        var g = GroupAccumulator(s)
        g.add(c(0.1)); g.add(c(0.2)); g.add(c(3))
        g.remove(c(0.1)); g.remove(c(0.2))
        #expect(g.values == ["s": 3, "a": 3])  // no drift once the fractions have left
        g.add(c(-2)); g.add(c(1e10)); g.remove(c(1e10))
        #expect(g.values == ["s": 1, "a": 0.5])
        g.add(c(true)); g.add(c("7")); g.add(c(.null)); g.add(c([1]))
        #expect(g.values == ["s": 1, "a": 0.5] && g.count == 6)  // non-numbers count as records only
    }
}

@Suite struct QueryCountedSortedValuesTests {
    /// Random inserts and removals over more distinct values than a chunk holds, checked
    /// against a plain sorted list after every step.
    @Test func matchesASortedListModel() {
        var rng = QuerySplitMix(seed: 48)
        var set = CountedSortedValues()
        var model: [JSON] = []
        for step in 0..<4000 {
            let n = Int(rng.next() % 700)
            let v: JSON = n % 7 == 0 ? .string("s\(n)") : (n % 11 == 0 ? .array([.number(Double(n))]) : .number(Double(n)))
            if rng.next() % 3 == 0, !model.isEmpty {
                let victim = model[Int(rng.next() % UInt64(model.count))]
                set.remove(victim)
                model.remove(at: model.firstIndex { QueryOrder.equal($0, victim) }!)
            } else {
                set.insert(v)
                model.append(v)
            }
            model.sort { QueryOrder.compare($0, $1) < 0 }
            if step % 97 == 0 || step > 3900 {
                var expanded: [JSON] = []
                for e in set.entries { expanded += Array(repeating: e.value, count: e.count) }
                #expect(expanded == model, "step \(step)")
            }
            #expect(set.least == model.first && set.greatest == model.last, "step \(step)")
        }
        for v in model { set.remove(v) }
        #expect(set.least == nil && set.greatest == nil && set.entries.isEmpty)
    }
}

/// A small deterministic generator for the randomized tests.
struct QuerySplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct QueryGroupAccumulatorModelTests {
    /// Records join and leave a group at random; after every step the kept aggregates equal
    /// those of an accumulator built afresh from the records present. (Halves are exact in
    /// binary, so the fresh and the kept sums agree to the bit.)
    @Test func incrementalEqualsFresh() {
        let aggregates = QueryGroup(by: [FieldPath("g")], aggregates: [
            QueryAggregate(name: "n", kind: .count), QueryAggregate(name: "s", kind: .sum(FieldPath("v"))),
            QueryAggregate(name: "a", kind: .avg(FieldPath("v"))), QueryAggregate(name: "lo", kind: .min(FieldPath("v"))),
            QueryAggregate(name: "hi", kind: .max(FieldPath("v"))), QueryAggregate(name: "k", kind: .max(.key)),
        ]).aggregates
        var rng = QuerySplitMix(seed: 7)
        var kept = GroupAccumulator(aggregates)
        var present: [(key: Key, record: Record)] = []
        for step in 0..<1500 {
            if rng.next() % 5 < 2, !present.isEmpty {
                let i = Int(rng.next() % UInt64(present.count))
                let gone = present.remove(at: i)
                kept.remove(GroupAccumulator.contribution(of: gone.record, key: gone.key, aggregates: aggregates))
            } else {
                let r = rng.next() % 9
                let v: JSON? = switch r {
                case 0: nil
                case 1: .null
                case 2: .string("s\(rng.next() % 5)")
                case 3: .bool(rng.next() % 2 == 0)
                case 4: .number(Double(Int(rng.next() % 40) - 20) / 2)
                default: .number(Double(Int(rng.next() % 1000) - 500))
                }
                var record: Record = ["g": "x"]
                if let v { record["v"] = v }
                let key = Key("k\(step)")
                present.append((key, record))
                kept.add(GroupAccumulator.contribution(of: record, key: key, aggregates: aggregates))
            }
            var fresh = GroupAccumulator(aggregates)
            for p in present { fresh.add(GroupAccumulator.contribution(of: p.record, key: p.key, aggregates: aggregates)) }
            #expect(kept.values == fresh.values, "step \(step)")
            #expect(kept.count == present.count)
        }
    }
}
