import OptimistModel

/// One row of a live query's result.
public enum QueryRow: Sendable, Equatable {
    /// A record: its key, visible value and status.
    case record(key: Key, value: Record, status: RecordStatus)
    /// A group of a grouped query: its `by` values, each named by its path as written
    /// (`{"habit": "run"}`; a missing field shows as null), and its aggregates by name.
    case group(group: [Key: JSON], values: [Key: JSON])

    /// The row as every host shows it: `{"key": K, "value": {...}, "status": "pending"}` or
    /// `{"group": {...}, "values": {...}}`.
    public var json: JSON {
        switch self {
        case .record(let key, let value, let status):
            .object(["key": .string(key.string), "value": .object(value), "status": .string(status.description)])
        case .group(let group, let values):
            .object(["group": .object(group), "values": .object(values)])
        }
    }

    /// The record's key (nil for a group row).
    public var key: Key? {
        if case .record(let key, _, _) = self { return key }
        return nil
    }
}

/// One step from a live query's rows before a call to its rows after it. Applied in order,
/// each index counted after the deltas before it have been applied.
public enum QueryDelta: Sendable, Equatable {
    /// `row` enters at `index`; the rows from there on move down by one.
    case insert(index: Int, row: QueryRow)
    /// The row at `index` leaves; the rows after it move up by one.
    case delete(index: Int)
    /// The row at `index` stays there with new contents (value, status or aggregates).
    case update(index: Int, row: QueryRow)

    /// `{"op": "insert", "index": i, "row": ROW}`, `{"op": "delete", "index": i}` or
    /// `{"op": "update", "index": i, "row": ROW}`.
    public var json: JSON {
        switch self {
        case .insert(let i, let row): .object(["op": "insert", "index": .number(Double(i)), "row": row.json])
        case .delete(let i): .object(["op": "delete", "index": .number(Double(i))])
        case .update(let i, let row): .object(["op": "update", "index": .number(Double(i)), "row": row.json])
        }
    }

    /// Applies deltas to `rows`, as a listener's mirror of a query does.
    public static func apply(_ deltas: [QueryDelta], to rows: inout [QueryRow]) {
        for d in deltas {
            switch d {
            case .insert(let i, let row): rows.insert(row, at: i)
            case .delete(let i): rows.remove(at: i)
            case .update(let i, let row): rows[i] = row
            }
        }
    }
}
