import OptimistModel
import OptimistSQLite

/// Reads a store file's copy (see ``FileSnapshot``) in one read transaction, through
/// OptimistSQLite's schema and decoders, by the layout the file says it has: versions 1 to
/// `Schema.currentVersion` are known; a newer one is read for what it shares with them, with a
/// warning. What an older layout lacks is told by its tables' columns, not by its version.
final class StoreReader {
    let db: Connection
    let version: Int64
    private let mutationColumns: Set<String>
    private let metaColumns: Set<String>

    init(_ snapshot: FileSnapshot) throws(CLIError) {
        // Read-only, except to let SQLite undo the interrupted transaction a copied rollback
        // journal describes (in the copy only).
        let db: Connection
        do { db = try Connection(path: snapshot.database, readOnly: !snapshot.hasJournal) } catch {
            throw .unreadable("SQLite cannot open it: \(error.message)")
        }
        self.db = db
        func sql<R, E>(_ body: () throws(E) -> R) throws(CLIError) -> R { try StoreReader.sql(db, body) }
        try sql { try db.exec("BEGIN") }
        let (appID, version) = try sql { try Schema.marks(db) }
        guard appID == Int64(Schema.applicationID) else {
            let tables = try sql { try db.scalarInt("SELECT count(*) FROM sqlite_master") }
            if appID == 0 && tables == 0 { throw .notAStore("it is an empty SQLite database") }
            throw .notAStore(appID == 0 ? "it is a SQLite database without the Optimist application id"
                                        : "it is a SQLite database of another program (application id \(appID))")
        }
        guard version >= 1 else { throw .damaged("it has the Optimist application id but no layout version") }
        self.version = version
        metaColumns = try sql { try db.columns(of: .meta) }
        mutationColumns = try sql { try db.columns(of: .mutations) }
        let recordColumns = try sql { try db.columns(of: .records) }
        for (table, columns) in [(Schema.Table.meta, metaColumns), (.mutations, mutationColumns), (.records, recordColumns)]
        where columns.isEmpty {
            throw .damaged("it has no \(table.rawValue) table")
        }
    }

    /// True when the file's layout is newer than this tool knows.
    var isNewerThanKnown: Bool { version > Schema.currentVersion }

    // MARK: SQLite

    /// Runs `body`, a failed SQLite call in it reported as the tool reports them: a file that
    /// is not (or no longer) a well-formed database is damaged; anything else is SQLite's own
    /// message. The tool stops at its first failure, so the connection's last one is this.
    private static func sql<R, E>(_ db: Connection, _ body: () throws(E) -> R) throws(CLIError) -> R {
        do { return try body() } catch {
            guard let f = db.lastFailure else { throw .unreadable("\(error)") }
            if f.isNotADatabase { throw .notAStore("it is not a SQLite database (\(f.message))") }
            if f.isDamage { throw .damaged("SQLite says: \(f.message)") }
            throw .unreadable("SQLite says: \(f.message) (\(f.primaryCode))")
        }
    }

    private func sql<R, E>(_ body: () throws(E) -> R) throws(CLIError) -> R { try StoreReader.sql(db, body) }

    /// A statement with its parameters bound to `bindings`, in order.
    private func prepare(_ query: String, _ bindings: String...) throws(CLIError) -> Statement {
        let s = try sql { try db.prepare(query) }
        for (i, text) in bindings.enumerated() { s.bind(Int32(i + 1), text) }
        return s
    }

    /// Steps once: true when a row is ready, false when done.
    private func step(_ s: Statement) throws(CLIError) -> Bool { try sql { try s.step() } }

    /// The names of `table`'s columns; empty when the file has no such table.
    private func columns(_ table: Schema.Table) throws(CLIError) -> Set<String> { try sql { try db.columns(of: table) } }

    // MARK: Meta

    func meta() throws(CLIError) -> StoredMeta {
        guard let meta = try sql({ try StoredMeta.read(db, present: metaColumns) }) else {
            throw .damaged("its meta table has no row")
        }
        return meta
    }

    // MARK: Mutations

    /// The stored not-yet-ended mutations, in id order, all or of one status.
    func mutations(status: MutationStatus? = nil) throws(CLIError) -> [MutationRecord] {
        let r = try prepare(MutationRows.query(present: mutationColumns))
        var out = [MutationRecord]()
        while try step(r) {
            var m: MutationRecord
            do { m = try MutationRows.mutation(r) } catch {
                switch error {
                case .status(let id, let raw): throw .damaged("mutation \(id) has status \(raw), not pending, inflight or failed")
                case .policy(let id, let raw): throw .damaged("mutation \(id) has an unknown policy (\(raw))")
                }
            }
            if let status, m.status != status { continue }
            // Packed (layout 5 on) or, in rows written before, JSON text.
            let id = m.id
            m.ops = try r.withBlob(1) { (stored) throws(CLIError) in
                do throws(StoredOps.Fault) { return try StoredOps.decode(stored) } catch {
                    // The tool's own words for the fault, as it has always printed them.
                    let reason: String
                    switch error {
                    case .packed(let damage): reason = "\(damage)"
                    case .notJSON(let failure): reason = "ops: \(failure)"
                    case .notAList: reason = "ops must be a JSON array"
                    case .op(let e): reason = "\(e)"
                    case .empty: throw .damaged("mutation \(id) has no ops")
                    }
                    throw .damaged("the ops of mutation \(id) do not decode: \(reason)")
                }
            }
            out.append(m)
        }
        return out
    }

    /// How many stored mutations have each live status.
    func mutationCounts() throws(CLIError) -> [MutationStatus: Int] {
        let r = try prepare(Schema.Query.mutationsPerStatus)
        var out: [MutationStatus: Int] = [.pending: 0, .inflight: 0, .failed: 0]
        while try step(r) {
            guard let st = MutationStatus(rawValue: Int32(truncatingIfNeeded: r.int64(0))), !st.isEnded else {
                throw .damaged("a mutation has status \(r.int64(0)), not pending, inflight or failed")
            }
            out[st] = Int(r.int64(1))
        }
        return out
    }

    /// How many ended mutations the file remembers as committed and as rolled back: 2-bit
    /// codes in `ended_chunks` (layout 2 on), or rows of `ended` (layout 1).
    func endedCounts() throws(CLIError) -> (committed: Int, rolledBack: Int) {
        var committed = 0, rolledBack = 0
        if try !columns(.endedChunks).isEmpty {
            let r = try prepare(EndedChunks.query)
            var ended = [EndedMutation]()  // one chunk's at a time
            while try step(r) {
                ended.removeAll(keepingCapacity: true)
                do { try EndedChunks.decode(row: r, into: &ended) } catch {
                    // The tool's own words for a bad code, as it has always printed them; the
                    // library's for the rest.
                    if case .invalidCode(let chunk, _) = error { throw .damaged("ended chunk \(chunk) holds an invalid code") }
                    throw .damaged(error.message)
                }
                for e in ended {
                    if e.status == .committed { committed += 1 } else { rolledBack += 1 }
                }
            }
        } else if try !columns(.ended).isEmpty {
            let r = try prepare(Schema.Query.endedRowsPerStatus)
            while try step(r) {
                switch r.int64(0) {
                case Int64(MutationStatus.committed.rawValue): committed += Int(r.int64(1))
                case Int64(MutationStatus.rolledBack.rawValue): rolledBack += Int(r.int64(1))
                default: throw .damaged("an ended mutation has status \(r.int64(0))")
                }
            }
        }
        return (committed, rolledBack)
    }

    // MARK: Records

    /// The number of stored (confirmed) records in each collection, in collection order.
    func recordCounts() throws(CLIError) -> [(collection: String, count: Int)] {
        let r = try prepare(Schema.Query.recordsPerCollection)
        var out = [(collection: String, count: Int)]()
        while try step(r) { out.append((r.text(0) ?? "", Int(r.int64(1)))) }
        return out
    }

    /// The stored (confirmed) record, or nil.
    func record(_ collection: String, _ key: String) throws(CLIError) -> Record? {
        let r = try prepare(Schema.Query.record, collection, key)
        guard try step(r) else { return nil }
        return try r.withBlob(0) { (value) throws(CLIError) in try StoreReader.parse(value, collection, key) }
    }

    /// Calls `body` with each stored record of `collection` (nil: every one) whose key starts
    /// with `prefix`, in collection then key byte order (SQLite compares text bytewise).
    func records(collection: String?, prefix: String,
                 _ body: (Key, Key, Record) throws(CLIError) -> Void) throws(CLIError) {
        let r: Statement
        if let collection {
            r = try prepare(Schema.Query.recordsFrom, collection, prefix)
        } else {
            r = try prepare(Schema.Query.records)
        }
        let p = Key(prefix)
        while try step(r) {
            let c = Key(r.text(0) ?? ""), k = Key(r.text(1) ?? "")
            guard k.hasBytePrefix(p) else {
                if collection != nil { break }   // keys are in order: no later one matches
                continue
            }
            try body(c, k, try r.withBlob(2) { (value) throws(CLIError) in try StoreReader.parse(value, c.string, k.string) })
        }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ collection: String, _ key: String) throws(CLIError) -> Record {
        do { return try JSONParser.parseObject(bytes) } catch {
            throw .damaged("record \(key) of \(collection) is not a JSON object: \(error)")
        }
    }

    /// SQLite's `PRAGMA quick_check` of the copy (its b-trees and records, without the
    /// index cross-checks): nothing, or what is wrong.
    func quickCheck() throws(CLIError) {
        let r = try prepare("PRAGMA quick_check")
        var problems = [String]()
        while try step(r) {
            let line = r.text(0) ?? ""
            if line != "ok" { problems.append(line) }
        }
        if !problems.isEmpty { throw .damaged("SQLite's check finds: " + problems.prefix(3).joined(separator: "; ")) }
    }

    // MARK: Other tables

    /// The number of loaded key ranges (freshness), nil when the layout has none.
    func loadedRanges() throws(CLIError) -> Int? {
        try columns(.loaded).isEmpty ? nil : Int(try sql { try db.scalarInt(Schema.Query.loadedRanges) })
    }

    /// The names of stored views, or nil when the layout stores none (views then live in the
    /// memory of the process that defined them).
    /// Each index as "collection: field" with its number of entries; nil for a layout
    /// before indexes (6 and older).
    func indexes() throws(CLIError) -> [(collection: String, field: String, entries: Int)]? {
        guard !(try columns(.indexes)).isEmpty else { return nil }
        let r = try prepare(Schema.Query.indexes)
        var out = [(collection: String, field: String, entries: Int)]()
        while try step(r) { out.append((r.text(0) ?? "", r.text(1) ?? "", Int(r.int64(2)))) }
        return out
    }

    func views() throws(CLIError) -> [String]? {
        let columns = try columns(.views)
        guard !columns.isEmpty else { return nil }
        guard let query = Schema.Query.viewNames(present: columns) else { return [] }
        let r = try prepare(query)
        var out = [String]()
        while try step(r) { out.append(r.text(0) ?? "") }
        return out
    }
}
