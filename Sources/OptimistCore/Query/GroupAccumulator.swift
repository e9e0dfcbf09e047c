import OptimistModel

/// The aggregates of one group, kept incrementally: a record's contribution is added when it
/// joins the group and removed when it leaves (or changes: remove the old, add the new), so
/// a change costs O(log n) and never a pass over the group.
///
/// Aggregates over the same field share their state: `sum:x` and `avg:x` one running sum,
/// `min:x` and `max:x` one sorted multiset.
package struct GroupAccumulator {
    /// What each aggregate reads: its kind, and the index of its shared state (into
    /// ``sums`` or ``extremes``; unused for `count`).
    private let plan: [(name: Key, kind: QueryAggregateKind, slot: Int)]
    /// For each shared state, the aggregate whose contribution feeds it.
    private let sumSources: [Int]
    private let extremeSources: [Int]
    private var sums: [RunningSum]
    private var extremes: [CountedSortedValues]
    /// Records in the group.
    package private(set) var count = 0

    package init(_ aggregates: [QueryAggregate]) {
        var plan: [(name: Key, kind: QueryAggregateKind, slot: Int)] = []
        var sumSlots: [FieldPath: Int] = [:], extremeSlots: [FieldPath: Int] = [:]
        var sumSources: [Int] = [], extremeSources: [Int] = []
        for (i, a) in aggregates.enumerated() {
            var slot = 0
            switch a.kind {
            case .count: break
            case .sum(let f), .avg(let f):
                if let s = sumSlots[f] { slot = s } else {
                    slot = sumSources.count
                    sumSlots[f] = slot
                    sumSources.append(i)
                }
            case .min(let f), .max(let f):
                if let s = extremeSlots[f] { slot = s } else {
                    slot = extremeSources.count
                    extremeSlots[f] = slot
                    extremeSources.append(i)
                }
            }
            plan.append((Key(a.name), a.kind, slot))
        }
        self.plan = plan
        self.sumSources = sumSources
        self.extremeSources = extremeSources
        sums = Array(repeating: RunningSum(), count: sumSources.count)
        extremes = Array(repeating: CountedSortedValues(), count: extremeSources.count)
    }

    /// What one record contributes, one value per aggregate in order: nil for `count`; for
    /// `sum`/`avg` the field's value when it is a number, else nil; for `min`/`max` the
    /// field's value when it is present and not null, else nil. Extracted once, so a live
    /// query keeps this instead of the record, and removes exactly what it added.
    package static func contribution(of record: Record, key: Key, aggregates: [QueryAggregate]) -> [JSON?] {
        aggregates.map { a -> JSON? in
            switch a.kind {
            case .count: return nil
            case .sum(let f), .avg(let f):
                let v = f.value(in: record, key: key)
                guard case .number? = v else { return nil }
                return v
            case .min(let f), .max(let f):
                let v = f.value(in: record, key: key)
                if case .null? = v { return nil }
                return v
            }
        }
    }

    package mutating func add(_ contribution: [JSON?]) {
        count += 1
        for (slot, source) in sumSources.enumerated() {
            if case .number(let d)? = contribution[source] { sums[slot].add(d) }
        }
        for (slot, source) in extremeSources.enumerated() {
            if let v = contribution[source], v != .null { extremes[slot].insert(v) }
        }
    }

    package mutating func remove(_ contribution: [JSON?]) {
        count -= 1
        for (slot, source) in sumSources.enumerated() {
            if case .number(let d)? = contribution[source] { sums[slot].remove(d) }
        }
        for (slot, source) in extremeSources.enumerated() {
            if let v = contribution[source], v != .null { extremes[slot].remove(v) }
        }
    }

    /// The row's values by aggregate name: `count` counts records; `sum` the numeric values
    /// (none: 0); `avg` their mean (none: null); `min`/`max` by the total order over present,
    /// non-null values (none: null). A sum beyond a double's range is null.
    package var values: [Key: JSON] {
        var out = [Key: JSON](minimumCapacity: plan.count)
        for (name, kind, slot) in plan {
            switch kind {
            case .count: out[name] = .number(Double(count))
            case .sum: out[name] = sums[slot].sum.map(JSON.number) ?? .null
            case .avg: out[name] = sums[slot].mean.map(JSON.number) ?? .null
            case .min: out[name] = extremes[slot].least ?? .null
            case .max: out[name] = extremes[slot].greatest ?? .null
            }
        }
        return out
    }
}

/// A sum that values can leave as well as join. Adding and then subtracting doubles drifts
/// (0.1 + 0.2 - 0.1 is not 0.2), and a live query must equal a fresh run of it; so integral
/// values (the common case: minutes, counts, cents) are summed exactly in an integer, and the
/// others in a double that is reset to exactly 0 whenever the last of them leaves. Integral
/// values are those below 2^32 in magnitude, so the integer cannot overflow before a group
/// holds 2^31 records.
struct RunningSum {
    private var integral: Int64 = 0
    private var other: Double = 0
    private var otherCount = 0
    /// Numeric values in the sum (an average's divisor).
    private(set) var numbers = 0

    private static func isSmallInteger(_ d: Double) -> Bool {
        d.rounded(.towardZero) == d && abs(d) < 4_294_967_296
    }

    mutating func add(_ d: Double) {
        numbers += 1
        if Self.isSmallInteger(d) {
            integral &+= Int64(d)
        } else {
            other += d
            otherCount += 1
        }
    }

    mutating func remove(_ d: Double) {
        numbers -= 1
        if Self.isSmallInteger(d) {
            integral &-= Int64(d)
        } else {
            otherCount -= 1
            other = otherCount == 0 ? 0 : other - d
        }
    }

    /// The sum (of none: 0); nil when it is not finite.
    var sum: Double? {
        let s = Double(integral) + other
        return s.isFinite ? s : nil
    }

    /// The mean; nil for no values or a sum that is not finite.
    var mean: Double? {
        guard numbers > 0, let s = sum else { return nil }
        return s / Double(numbers)
    }
}

/// A multiset of JSON values in the total order (``QueryOrder/compare(_:_:)``), each distinct
/// value once with its count: the least and greatest stay known when one copy of the current
/// extreme leaves. A sorted array found by binary search: O(log n) to find, and an insertion
/// or removal of a distinct value moves the entries after it.
struct CountedSortedValues {
    private var entries: [(value: JSON, count: Int)] = []

    /// The index of the first entry not less than `v`.
    private func lowerBound(_ v: JSON) -> Int {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if QueryOrder.compare(entries[mid].value, v) < 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    mutating func insert(_ v: JSON) {
        let i = lowerBound(v)
        if i < entries.count && QueryOrder.compare(entries[i].value, v) == 0 {
            entries[i].count += 1
        } else {
            entries.insert((v, 1), at: i)
        }
    }

    /// Removes one copy of `v`; nothing when there is none (a caller's mistake, not ours to
    /// turn into a crash).
    mutating func remove(_ v: JSON) {
        let i = lowerBound(v)
        guard i < entries.count && QueryOrder.compare(entries[i].value, v) == 0 else { return }
        if entries[i].count > 1 { entries[i].count -= 1 } else { entries.remove(at: i) }
    }

    var least: JSON? { entries.first?.value }
    var greatest: JSON? { entries.last?.value }
    /// Distinct values held.
    var distinct: Int { entries.count }
}
