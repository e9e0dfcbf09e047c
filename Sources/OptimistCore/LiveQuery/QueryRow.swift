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

// The rows' and deltas' JSON text, written straight into bytes: the C ABI hands every listener
// call and every rows() read this text, and building `JSON` values first (dictionaries for
// each delta and row) cost more than the query's own upkeep. Members are in canonical order.

extension QueryRow {
    /// Appends the row's canonical JSON (as ``json`` writes it).
    package func write(into out: inout [UInt8]) {
        switch self {
        case .record(let key, let value, let status):
            out.append(contentsOf: #"{"key":"#.utf8)
            JSONWriter.writeString(key.string, into: &out)
            out.append(contentsOf: #","status":""#.utf8)
            out.append(contentsOf: status.description.utf8)
            out.append(contentsOf: #"","value":"#.utf8)
            JSONWriter.appendObject(value, to: &out, sorted: true)
            out.append(UInt8(ascii: "}"))
        case .group(let group, let values):
            out.append(contentsOf: #"{"group":"#.utf8)
            JSONWriter.writeObject(group, into: &out)
            out.append(contentsOf: #","values":"#.utf8)
            JSONWriter.writeObject(values, into: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The rows as one JSON array, UTF-8 bytes.
    package static func jsonBytes(_ rows: [QueryRow]) -> [UInt8] {
        jsonArray(rows, bytesEach: 64) { $0.write(into: &$1) }
    }
}

extension QueryDelta {
    /// Appends the delta's canonical JSON (as ``json`` writes it).
    package func write(into out: inout [UInt8]) {
        func head(_ index: Int, _ op: String) {
            out.append(contentsOf: #"{"index":"#.utf8)
            out.append(contentsOf: String(index).utf8)
            out.append(contentsOf: #","op":""#.utf8)
            out.append(contentsOf: op.utf8)
            out.append(UInt8(ascii: "\""))
        }
        switch self {
        case .insert(let i, let row), .update(let i, let row):
            head(i, { if case .insert = self { return "insert" } else { return "update" } }())
            out.append(contentsOf: #","row":"#.utf8)
            row.write(into: &out)
        case .delete(let i):
            head(i, "delete")
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The deltas as one JSON array, UTF-8 bytes.
    package static func jsonBytes(_ deltas: [QueryDelta]) -> [UInt8] {
        jsonArray(deltas, bytesEach: 96) { $0.write(into: &$1) }
    }
}

/// A JSON array of `items`, each written by `write`, as UTF-8 bytes (`bytesEach`: a guess of
/// an item's size, to reserve the buffer once).
private func jsonArray<T>(_ items: [T], bytesEach: Int, _ write: (T, inout [UInt8]) -> Void) -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(bytesEach * items.count + 2)
    out.append(UInt8(ascii: "["))
    for (i, item) in items.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        write(item, &out)
    }
    out.append(UInt8(ascii: "]"))
    return out
}
