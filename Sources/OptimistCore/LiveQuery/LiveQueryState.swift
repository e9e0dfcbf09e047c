import OptimistModel

/// A record row's place in a live query's order: its sort values and its key (which breaks
/// ties, so no two rows compare equal). The record itself is not kept: rows are read from the
/// visible state when they are shown.
///
/// The first sort value is held inline and the others in an array, empty (no allocation) for
/// the usual one-field order: 56 bytes a row, in chunks (``OrderedRows``).
struct RowEntry {
    var first: JSON?
    var rest: [JSON?]
    var key: Key

    init(first: JSON?, rest: [JSON?], key: Key) {
        self.first = first
        self.rest = rest
        self.key = key
    }

    /// A row of a query in key order (no sort values).
    init(key: Key) { self.init(first: nil, rest: [], key: key) }

    /// The row order of a query ordered by items in these directions: each sort value in its
    /// item's direction, then the key bytewise. As ``QuerySpec/compareRows(_:_:)``, with
    /// numbers (the usual sort values) compared without the general comparison's switch or a
    /// copy of either value, and keys by their first 16 bytes (``Key/orderingHead``, two
    /// integers) first: rows that tie on their sort values (most rows of a query ordered by a
    /// few distinct values) are told apart without reaching the keys' bytes.
    struct Order: RowOrdering {
        let descending: [Bool]

        /// Reads the two entries where they are: the usual case (numbers, then keys) copies
        /// none of their fields.
        func compare(_ a: UnsafePointer<RowEntry>, _ b: UnsafePointer<RowEntry>) -> Int {
            if !descending.isEmpty {
                let c: Int
                if case .number(let u)? = a.pointee.first, case .number(let v)? = b.pointee.first {
                    c = u < v ? -1 : (u > v ? 1 : 0)
                } else {
                    c = QueryOrder.compare(a.pointee.first, b.pointee.first)
                }
                if c != 0 { return (c < 0) != descending[0] ? -1 : 1 }
                var i = 1
                while i < descending.count {
                    let c = QueryOrder.compare(a.pointee.rest[i - 1], b.pointee.rest[i - 1])
                    if c != 0 { return (c < 0) != descending[i] ? -1 : 1 }
                    i += 1
                }
            }
            let ha = a.pointee.key.orderingHead, hb = b.pointee.key.orderingHead
            if ha != hb { return ha < hb ? -1 : 1 }
            let c = compareBytes(a.pointee.key.string, b.pointee.key.string)
            return c < 0 ? -1 : (c > 0 ? 1 : 0)
        }
    }
}

/// The order of a grouped query's groups (``QuerySpec/compareGroups(_:_:)``).
struct GroupOrder: RowOrdering {
    func compare(_ a: UnsafePointer<[JSON]>, _ b: UnsafePointer<[JSON]>) -> Int { QuerySpec.compareGroups(a.pointee, b.pointee) }
}

/// A live query's result, kept equal to the query over the visible state by following each
/// changed record (``apply(key:value:status:old:valueChanged:changedInPlace:read:)``), never by a re-run.
///
/// Record queries keep every matching record's ``RowEntry`` in order (``OrderedRows``), not
/// just the first `limit`: when a row of the window leaves, the next one enters without
/// reading the collection again. Grouped queries keep per group its ``GroupAccumulator``.
///
/// Neither keeps a table by key: a changed record's old row (its entry, or its group and
/// contribution) follows from its value before the call, which the engine hands over with
/// the change. That value is exactly what the query last followed: every change a query hears
/// of is told against the visible state before its call (a staged batch's too, against what
/// a tap made between its steps: see ``Engine/publishStage(_:)``).
///
/// Deltas are collected during a call and taken at its end (``takeDeltas()``). Record rows
/// are read when their delta is made, at the call's end, when the engine's state is final;
/// group rows when the deltas are taken, after every record of the call has been followed.
final class LiveQueryState {
    // Stored properties are `@exclusivity(unchecked)`: ordered by the store's locks (see `Engine`).
    let id: UInt64
    let spec: QuerySpec
    /// The spec's limit, or `Int.max`.
    let limit: Int
    /// Each listener gets a call's deltas with the call's number among the query's deliveries
    /// (``delivered``): listeners run outside the store's locks on each call's own thread, so
    /// two threads' deliveries may arrive in either order, and the number puts them back.
    @exclusivity(unchecked) var listeners: [UInt64: @Sendable (UInt64, [QueryDelta]) -> Void] = [:]
    /// How many calls changed the rows (the last delivery's number; 0: none yet).
    @exclusivity(unchecked) var delivered: UInt64 = 0
    /// Listed in the engine's queries touched by the call in progress.
    @exclusivity(unchecked) var touched = false

    /// Whether the rows are in key order: a row's place then follows from its key alone. In
    /// any other order a changed record's row is found from its value before the call, which
    /// the engine hands over (``apply(key:value:status:old:valueChanged:changedInPlace:read:)``): the query
    /// keeps no table from keys to sort values.
    private let keyOrdered: Bool
    @exclusivity(unchecked) private var rows: OrderedRows<RowEntry.Order>

    private struct Membership {
        var group: [JSON]
        var contribution: [JSON?]
    }
    /// How many records the groups hold (their counts' total). A record's group and
    /// contribution are not kept: a change finds them from the record's value before it.
    @exclusivity(unchecked) private var grouped = 0
    @exclusivity(unchecked) private var groups: [[JSON]: GroupAccumulator] = [:]
    @exclusivity(unchecked) private var groupRows: OrderedRows<GroupOrder>

    /// A delta as made during a call; a group row is read when the deltas are taken.
    private enum Step {
        case insert(Int, QueryRow)
        case insertGroup(Int, [JSON])
        case delete(Int)
        case update(Int, QueryRow)
    }
    @exclusivity(unchecked) private var steps: [Step] = []
    /// Groups whose aggregates the call changed, with their values before it.
    @exclusivity(unchecked) private var groupsBefore: [[JSON]: [Key: JSON]] = [:]
    /// Groups the call created: their insert shows them as they are at its end.
    @exclusivity(unchecked) private var groupsInserted: Set<[JSON]> = []

    init(id: UInt64, spec: QuerySpec) {
        self.id = id
        self.spec = spec
        limit = spec.limit ?? Int.max
        keyOrdered = spec.order.isEmpty && spec.group == nil
        rows = OrderedRows(RowEntry.Order(descending: spec.order.map(\.descending)))
        groupRows = OrderedRows(GroupOrder())
    }

    var isGrouped: Bool { spec.group != nil }

    /// A matching record's entry: its sort values (the first inline, no array for a one-field
    /// order) and key.
    private func entry(_ record: Record, key: Key) -> RowEntry {
        let order = spec.order
        guard let head = order.first else { return RowEntry(key: key) }
        let rest = order.count > 1 ? order.dropFirst().map { $0.field.value(in: record, key: key) } : []
        return RowEntry(first: head.field.value(in: record, key: key), rest: rest, key: key)
    }

    /// The number of rows: matching records, or groups, up to the limit.
    var count: Int { min(isGrouped ? groupRows.count : rows.count, limit) }

    /// How many records the query follows (for tests and memory figures).
    var followed: Int { isGrouped ? grouped : rows.count }

    /// The first evaluation: `records` are the visible records the query could hold (its
    /// collection, or the keys of its prefix), each once, with their status; the spec keeps
    /// those in its range and passing its predicate.
    func load(_ records: [(key: Key, value: Record, status: RecordStatus)]) {
        if let group = spec.group {
            for r in records where spec.matches(key: r.key, record: r.value, status: r.status) {
                let m = Membership(group: spec.groupValues(r.value, key: r.key),
                                   contribution: GroupAccumulator.contribution(of: r.value, key: r.key, aggregates: group.aggregates))
                grouped += 1
                groups[m.group, default: GroupAccumulator(group.aggregates)].add(m.contribution)
            }
            groupRows.load(sorted: groups.keys.sorted { QuerySpec.compareGroups($0, $1) < 0 })
        } else {
            var entries = [RowEntry]()
            entries.reserveCapacity(records.count)
            for r in records where spec.matches(key: r.key, record: r.value, status: r.status) {
                entries.append(entry(r.value, key: r.key))
            }
            let order = rows.order
            entries.sort { order.compareValues($0, $1) < 0 }
            rows.load(sorted: entries)
        }
    }

    /// Follows one record's change: `value` and `status` are what it is now (nil: gone), `old`
    /// what it was when the query last followed it (the visible state before the call: the
    /// engine's `before`); `valueChanged` whether the value differs from that one (false: only
    /// the status changed, as at a commit); `changedInPlace` whether its value or status
    /// differs from before the call (a row that stays where it is gets an update only then).
    /// `read` gives a record's row as it is now (for a row that enters the window because
    /// another left it).
    func apply(key: Key, value: Record?, status: RecordStatus, old before: (value: Record?, status: RecordStatus),
               valueChanged: Bool, changedInPlace: Bool, read: (Key) -> QueryRow) {
        let matches = value.map { spec.matches(key: key, record: $0, status: status) } ?? false
        // The same value: the predicate answers as before unless it reads the status, and the
        // record's sort values (its entry) or group and contribution are the ones it had.
        let same = !valueChanged && value != nil
        let matched = same && !spec.readsStatus
            ? matches
            : before.value.map { spec.matches(key: key, record: $0, status: before.status) } ?? false
        if isGrouped {
            if same && matched == matches { return }  // the aggregates read values only
            applyGrouped(key: key, value: matches ? value : nil, before: matched ? before.value : nil)
            return
        }
        let row = { QueryRow.record(key: key, value: value ?? [:], status: status) }
        let old: RowEntry?
        if keyOrdered {
            let probe = RowEntry(key: key)
            let at = rows.index(of: probe)
            if let at, matches {
                // In key order a row that stays never moves: one search finds it.
                if at < limit, changedInPlace { steps.append(.update(at, row())) }
                return
            }
            old = at == nil ? nil : probe
        } else if matched, let v = before.value {
            // Its row is where its value before the call put it.
            old = entry(v, key: key)
        } else {
            old = nil
        }
        guard old != nil || matches else { return }
        // Its entry now, computed once (nil when it leaves the result).
        let new = matches ? (same && old != nil ? old : value.map { entry($0, key: key) }) : nil
        if let old, let new, same || rows.order.compareValues(old, new) == 0 {
            // Its place is unchanged (a status change, a field the order does not read):
            // found, not removed and inserted again.
            if let p = rows.index(of: old), p < limit, changedInPlace { steps.append(.update(p, row())) }
            return
        }
        var p: Int?, q: Int?
        if let old { p = rows.remove(old) }
        if let new { q = rows.insert(new) }
        let entering = { (i: Int) in Step.insert(i, read(self.rows[i].key)) }
        switch (p, q) {
        case (let p?, let q?):
            moved(from: p, to: q, changedInPlace: changedInPlace, entering: entering,
                  inserted: { .insert($0, row()) }, updated: { .update($0, row()) })
        case (let p?, nil): left(p, entering: entering)
        case (nil, let q?): entered(q, inserted: { .insert($0, row()) })
        case (nil, nil): return
        }
    }

    /// `value`: the record now if it matches (else nil); `before`: the record before the call
    /// if it matched then (else nil), which tells the group and contribution it had.
    private func applyGrouped(key: Key, value: Record?, before: Record?) {
        guard let aggregates = spec.group?.aggregates else { return }
        func membership(_ v: Record) -> Membership {
            Membership(group: spec.groupValues(v, key: key),
                       contribution: GroupAccumulator.contribution(of: v, key: key, aggregates: aggregates))
        }
        let old = before.map(membership)
        let new = value.map(membership)
        if let old, let new, old.group == new.group {
            // Stays in its group: the group's row is updated in place (never deleted and
            // inserted again, even when this record is its only one).
            guard old.contribution != new.contribution, groups[old.group] != nil else { return }
            noteGroupBefore(old.group)
            // Mutated in place through the dictionary (optional chaining): a copy taken out
            // and stored back would copy its value lists, O(group size), on every change.
            groups[old.group]?.remove(old.contribution)
            groups[old.group]?.add(new.contribution)
            return
        }
        if let old, groups[old.group] != nil {
            noteGroupBefore(old.group)
            groups[old.group]?.remove(old.contribution)
            grouped -= 1
            if groups[old.group]?.count ?? 0 == 0 {
                groups.removeValue(forKey: old.group)
                let p = groupRows.remove(old.group)
                left(p, entering: { .insertGroup($0, self.groupRows[$0]) })
            }
        }
        if let new {
            grouped += 1
            if groups[new.group] != nil {
                noteGroupBefore(new.group)
                groups[new.group]?.add(new.contribution)
            } else {
                var acc = GroupAccumulator(aggregates)
                acc.add(new.contribution)
                groups[new.group] = acc
                let q = groupRows.insert(new.group)
                // Shown as it is when the deltas are taken: no update of its own.
                groupsBefore.removeValue(forKey: new.group)
                groupsInserted.insert(new.group)
                entered(q, inserted: { .insertGroup($0, new.group) })
            }
        }
    }

    /// Remembers a group's aggregates before the call's first change to it (an update is
    /// delivered only if they differ at the end).
    private func noteGroupBefore(_ group: [JSON]) {
        guard groupsBefore[group] == nil, !groupsInserted.contains(group), let acc = groups[group] else { return }
        groupsBefore[group] = acc.values
    }

    // The deltas for one element that was at `p` of the whole order and is at `q` now, seen
    // through the window of the first `limit` rows; `n` counts the rows after the change.

    /// It left the result (was at `p`): if it was shown, the next row enters at the window's end.
    private func left(_ p: Int?, entering: (Int) -> Step) {
        guard let p, p < limit else { return }
        steps.append(.delete(p))
        if (isGrouped ? groupRows.count : rows.count) >= limit { steps.append(entering(limit - 1)) }
    }

    /// It entered the result (is at `q`): if it is shown, the window's last row is pushed out.
    private func entered(_ q: Int?, inserted: (Int) -> Step) {
        guard let q, q < limit else { return }
        steps.append(inserted(q))
        if (isGrouped ? groupRows.count : rows.count) > limit { steps.append(.delete(limit)) }
    }

    /// A record row was at `p` and is at `q` (both in the result).
    private func moved(from p: Int, to q: Int, changedInPlace: Bool, entering: (Int) -> Step,
                       inserted: (Int) -> Step, updated: (Int) -> Step) {
        if p < limit && q < limit {
            if p != q {
                steps.append(.delete(p))
                steps.append(inserted(q))
            } else if changedInPlace {
                steps.append(updated(p))
            }
        } else if p < limit {
            // It left the window: the next row enters at its end.
            steps.append(.delete(p))
            steps.append(entering(limit - 1))
        } else if q < limit {
            // It entered: the window's last row is pushed out.
            steps.append(inserted(q))
            steps.append(.delete(limit))
        }
    }

    /// The call's deltas, in order (empty when its rows are what they were); clears them.
    func takeDeltas() -> [QueryDelta] {
        defer {
            steps.removeAll(keepingCapacity: true)
            groupsBefore.removeAll(keepingCapacity: true)
            groupsInserted.removeAll(keepingCapacity: true)
        }
        var out = [QueryDelta]()
        out.reserveCapacity(steps.count + groupsBefore.count)
        for s in steps {
            switch s {
            case .insert(let i, let row): out.append(.insert(index: i, row: row))
            case .insertGroup(let i, let group): out.append(.insert(index: i, row: groupRow(group)))
            case .delete(let i): out.append(.delete(index: i))
            case .update(let i, let row): out.append(.update(index: i, row: row))
            }
        }
        // Groups whose aggregates changed in place: at their final index, after the inserts
        // and deletes (which leave them where the final order has them).
        var updates = [(Int, QueryDelta)]()
        for (group, before) in groupsBefore {
            guard let acc = groups[group], acc.values != before, let i = groupRows.index(of: group), i < limit else { continue }
            updates.append((i, .update(index: i, row: groupRow(group))))
        }
        updates.sort { $0.0 < $1.0 }
        out.append(contentsOf: updates.map(\.1))
        return out
    }

    /// The rows at `offset..<offset + count` of the result (count 0: to the end).
    func rows(offset: Int, count wanted: Int, read: (Key) -> QueryRow) -> [QueryRow] {
        let total = count
        guard offset < total else { return [] }
        let end = wanted == 0 ? total : min(total, offset + wanted)
        if isGrouped { return groupRows.elements(offset..<end).map(groupRow) }
        return rows.elements(offset..<end).map { read($0.key) }
    }

    private func groupRow(_ group: [JSON]) -> QueryRow {
        var named = [Key: JSON](minimumCapacity: group.count)
        for (path, value) in zip(spec.group?.by ?? [], group) { named[Key(path.text)] = value }
        return .group(group: named, values: groups[group]?.values ?? [:])
    }
}
