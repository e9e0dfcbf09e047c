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
/// extreme leaves. The distinct values are kept in sorted chunks of at most ``chunkLimit``
/// (a chunk's values all before the next chunk's): finding a value is two binary searches,
/// and an insertion or removal moves at most a chunk's entries, where one sorted array would
/// move up to all of them (`max:$key` has a distinct value per record).
struct CountedSortedValues {
    typealias Entry = (value: JSON, count: Int)
    private var chunks: [[Entry]] = []
    static let chunkLimit = 128

    /// Where `v` is or would go: the chunk, and the index of the first entry in it not less
    /// than `v` (past the last chunk's end when `v` is greater than every value).
    private func locate(_ v: JSON) -> (chunk: Int, index: Int) {
        var lo = 0, hi = chunks.count
        while lo < hi {  // the first chunk whose last value is not less than v
            let mid = (lo + hi) / 2
            if QueryOrder.compare(chunks[mid][chunks[mid].count - 1].value, v) < 0 { lo = mid + 1 } else { hi = mid }
        }
        if lo == chunks.count { return chunks.isEmpty ? (0, 0) : (lo - 1, chunks[lo - 1].count) }
        let chunk = chunks[lo]
        var a = 0, b = chunk.count
        while a < b {
            let mid = (a + b) / 2
            if QueryOrder.compare(chunk[mid].value, v) < 0 { a = mid + 1 } else { b = mid }
        }
        return (lo, a)
    }

    private func holds(_ v: JSON, at p: (chunk: Int, index: Int)) -> Bool {
        p.chunk < chunks.count && p.index < chunks[p.chunk].count && QueryOrder.compare(chunks[p.chunk][p.index].value, v) == 0
    }

    mutating func insert(_ v: JSON) {
        guard !chunks.isEmpty else { chunks = [[(v, 1)]]; return }
        let p = locate(v)
        if holds(v, at: p) {
            chunks[p.chunk][p.index].count += 1
            return
        }
        chunks[p.chunk].insert((v, 1), at: p.index)
        if chunks[p.chunk].count > Self.chunkLimit {
            let half = chunks[p.chunk].count / 2
            let upper = Array(chunks[p.chunk][half...])
            chunks[p.chunk].removeSubrange(half...)
            chunks.insert(upper, at: p.chunk + 1)
        }
    }

    /// Removes one copy of `v`; nothing when there is none (a caller's mistake, not ours to
    /// turn into a crash).
    mutating func remove(_ v: JSON) {
        let p = locate(v)
        guard holds(v, at: p) else { return }
        if chunks[p.chunk][p.index].count > 1 {
            chunks[p.chunk][p.index].count -= 1
        } else {
            chunks[p.chunk].remove(at: p.index)
            if chunks[p.chunk].isEmpty { chunks.remove(at: p.chunk) }
        }
    }

    var least: JSON? { chunks.first?.first?.value }
    var greatest: JSON? { chunks.last?.last?.value }
    /// The distinct values in order, with their counts (for tests).
    var entries: [Entry] { chunks.flatMap { $0 } }
}
