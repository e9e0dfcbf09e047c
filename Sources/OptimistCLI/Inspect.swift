import OptimistModel

/// `optimist inspect FILE`: what the store file holds.
enum Inspect {
    static func run(_ inv: Invocation, _ snapshot: FileSnapshot, _ store: StoreReader) throws(CLIError) {
        try store.quickCheck()
        let meta = try store.meta()
        let counts = try store.mutationCounts()
        let ended = try store.endedCounts()
        let records = try store.recordCounts()
        let loaded = try store.loadedRanges()
        let views = try store.views()
        let indexes = try store.indexes()
        let holder = lockHolder(inv.file)
        let live = counts.values.reduce(0, +)
        let total = records.reduce(0) { $0 + $1.count }

        if inv.json {
            var byCollection = [Key: JSON]()
            for r in records { byCollection[Key(r.collection)] = .number(Double(r.count)) }
            Output.json(.object([
                "file": .string(inv.file),
                "file_bytes": .number(Double(snapshot.fileBytes)),
                "wal_bytes": .number(Double(snapshot.walBytes)),
                "layout_version": .number(Double(store.version)),
                "integrity": "ok",
                "client_id": .string(meta.clientID),
                "open_by_pid": holder.map { .number(Double($0)) } ?? .null,
                "closed_cleanly": .bool(meta.closedCleanly),
                "next_mutation_id": .number(Double(meta.nextMutationID)),
                "sync_cursor": meta.syncCursor.map(JSON.string) ?? .null,
                "mutations": .object([
                    "pending": .number(Double(counts[.pending] ?? 0)),
                    "inflight": .number(Double(counts[.inflight] ?? 0)),
                    "failed": .number(Double(counts[.failed] ?? 0)),
                    "total": .number(Double(live)),
                ]),
                "ended": .object(["committed": .number(Double(ended.committed)), "rolled_back": .number(Double(ended.rolledBack))]),
                "records": .object(["total": .number(Double(total)), "by_collection": .object(byCollection)]),
                "loaded_ranges": loaded.map { .number(Double($0)) } ?? .null,
                "views": views.map { .array($0.map(JSON.string)) } ?? .null,
                "indexes": indexes.map { list in .array(list.map { i in
                    .object(["collection": .string(i.collection), "field": Self.fieldJSON(i.field), "entries": .number(Double(i.entries))])
                }) } ?? .null,
            ]))
            return
        }

        var facts: [(String, String)] = []
        let wal = snapshot.walBytes > 0 ? ", write-ahead log \(Show.bytes(snapshot.walBytes))" : ""
        facts.append(("file", "\(inv.file) (\(Show.bytes(snapshot.fileBytes))\(wal))"))
        facts.append(("layout", "version \(store.version)" + (store.isNewerThanKnown ? " (newer than this tool knows)" : "")))
        facts.append(("integrity", "ok (SQLite's quick check)"))
        facts.append(("client id", meta.clientID))
        if let holder {
            facts.append(("in use", "yes, open in process \(holder)"))
        } else {
            facts.append(("in use", meta.closedCleanly ? "no (closed cleanly)"
                                                       : "no; its last session ended without closing (killed or crashed)"))
        }
        let byStatus = "\(counts[.pending] ?? 0) pending, \(counts[.inflight] ?? 0) inflight, \(counts[.failed] ?? 0) failed"
        facts.append(("mutations", live == 0 ? "none waiting: everything is confirmed" : "\(live) not ended: \(byStatus)"))
        facts.append(("ended", "\(ended.committed) committed, \(ended.rolledBack) rolled back"))
        facts.append(("next id", "\(meta.nextMutationID)"))
        facts.append(("records", "\(total) confirmed" + (records.isEmpty ? "" : ", in \(records.count) collection\(records.count == 1 ? "" : "s")")))
        let width = records.map(\.collection.count).max() ?? 0
        for r in records {
            facts.append(("", "  " + r.collection + String(repeating: " ", count: width - r.collection.count + 2) + "\(r.count)"))
        }
        facts.append(("sync cursor", meta.syncCursor.map { JSONWriter.string(.string($0)) } ?? "none (never pulled)"))
        if let loaded { facts.append(("loaded", "\(loaded) key range\(loaded == 1 ? "" : "s") marked loaded")) }
        switch views {
        case nil: facts.append(("views", "none stored (this layout keeps views in the memory of the app)"))
        case let names? where names.isEmpty: facts.append(("views", "none"))
        case let names?: facts.append(("views", names.joined(separator: ", ")))
        }
        switch indexes {
        case nil: facts.append(("indexes", "none (this layout has no indexes)"))
        case let list? where list.isEmpty: facts.append(("indexes", "none"))
        case let list?:
            facts.append(("indexes", list.map { i in
                "\(i.collection): \(Self.fieldText(i.field)) (\(i.entries) entr\(i.entries == 1 ? "y" : "ies"))"
            }.joined(separator: ", ")))
        }
        Output.facts(facts)
    }

    /// An index's field as the file stores it (a JSON array of names), as JSON.
    static func fieldJSON(_ stored: String) -> JSON { (try? JSONParser.parse(stored)) ?? .string(stored) }

    /// The field dotted, as a spec writes it (the stored text when it is not an array of names).
    static func fieldText(_ stored: String) -> String {
        guard case .array(let items)? = try? JSONParser.parse(stored) else { return stored }
        return items.map { if case .string(let s) = $0 { s } else { "?" } }.joined(separator: ".")
    }
}
