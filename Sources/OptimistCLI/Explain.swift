import OptimistModel

/// `optimist explain FILE COLL KEY`: the stored pending mutations folded over the stored
/// record, by the library's own rule (``Explanation/fold(collection:key:confirmed:mutations:)``).
enum Explain {
    static func run(_ inv: Invocation, _ store: StoreReader) throws(CLIError) {
        let coll = inv.collection ?? "", key = inv.key ?? ""
        let x = Explanation.fold(collection: Key(coll), key: Key(key), confirmed: try store.record(coll, key),
                                 mutations: try store.mutations())
        if inv.json {
            Output.json(x.json)
            return
        }
        Output.line("record \(JSONWriter.string(.string(key))) of collection \(JSONWriter.string(.string(coll)))")
        var rows: [[String]] = [["confirmed", "", Show.value(x.confirmed, absent: "(none)")]]
        for l in x.layers {
            let ops = l.ops.enumerated().map { i, op in
                Show.op(op, withAddress: false) + (l.skipped.contains(i) ? " (skipped: cannot apply here)" : "")
            }
            rows.append(["#\(l.id) \(l.status)", ops.joined(separator: "; "), "-> " + Show.value(l.value, absent: "(deleted)")])
        }
        rows.append(["visible", "", Show.value(x.visible, absent: "(none)")])
        if x.layers.isEmpty { rows[rows.count - 1][2] += "  (nothing pending on it)" }
        Output.table(["LAYER", "OPS", "VALUE"], rows)
    }
}
