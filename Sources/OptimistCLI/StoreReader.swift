import OptimistModel

/// Reads a store file's copy (see ``FileSnapshot``) in one read transaction, by the layout
/// the file says it has (`PRAGMA user_version`): versions 1 to 5 are known; a newer one is
/// read for what it shares with them, with a warning.
final class StoreReader {
    /// "OPTM", the library's `PRAGMA application_id`.
    static let applicationID: Int64 = 0x4F50_544D
    /// The newest layout this tool knows.
    static let knownVersion: Int64 = 5

    let db: Database
    let version: Int64
    private let mutationColumns: Set<String>
    private let metaColumns: Set<String>

    init(_ snapshot: FileSnapshot) throws(CLIError) {
        db = try Database(snapshot.database, rollingBack: snapshot.hasJournal)
        try db.exec("BEGIN")
        let appID = try db.integer("PRAGMA application_id") ?? 0
        let version = try db.integer("PRAGMA user_version") ?? 0
        guard appID == StoreReader.applicationID else {
            let tables = try db.integer("SELECT count(*) FROM sqlite_master") ?? 0
            if appID == 0 && tables == 0 { throw .notAStore("it is an empty SQLite database") }
            throw .notAStore(appID == 0 ? "it is a SQLite database without the Optimist application id"
                                        : "it is a SQLite database of another program (application id \(appID))")
        }
        guard version >= 1 else { throw .damaged("it has the Optimist application id but no layout version") }
        self.version = version
        metaColumns = try db.columns("meta")
        mutationColumns = try db.columns("mutations")
        for (table, columns) in [("meta", metaColumns), ("mutations", mutationColumns), ("records", try db.columns("records"))]
        where columns.isEmpty {
            throw .damaged("it has no \(table) table")
        }
    }

    /// True when the file's layout is newer than this tool knows.
    var isNewerThanKnown: Bool { version > StoreReader.knownVersion }

    // MARK: Meta

    struct Meta {
        var clientID: String
        var nextMutationID: Int64
        var closedCleanly: Bool
        var syncCursor: String?
    }

    func meta() throws(CLIError) -> Meta {
        let cursor = metaColumns.contains("sync_cursor") ? "sync_cursor" : "NULL"
        let r = try db.prepare("SELECT client_id, next_mutation_id, closed_cleanly, \(cursor) FROM meta WHERE one = 1")
        guard try r.step(), let client = r.text(0) else { throw .damaged("its meta table has no row") }
        return Meta(clientID: client, nextMutationID: r.int64(1), closedCleanly: r.int64(2) != 0, syncCursor: r.text(3))
    }

    // MARK: Mutations

    /// The stored not-yet-ended mutations, in id order, all or of one status.
    func mutations(status: MutationStatus? = nil) throws(CLIError) -> [MutationRecord] {
        let retry = mutationColumns.contains("retry") ? "retry" : "0"
        let position = mutationColumns.contains("queue_position") ? "queue_position" : "NULL"
        let r = try db.prepare("""
            SELECT id, ops, status, attempts, next_attempt_ms, dedupe_key, policy, last_error, \(retry), \(position)
            FROM mutations ORDER BY id
            """)
        var out = [MutationRecord]()
        while try r.step() {
            let id = MutationID(bitPattern: r.int64(0))
            guard let st = MutationStatus(rawValue: Int32(truncatingIfNeeded: r.int64(2))), !st.isEnded else {
                throw .damaged("mutation \(id) has status \(r.int64(2)), not pending, inflight or failed")
            }
            guard let policy = FailurePolicy(rawValue: Int32(truncatingIfNeeded: r.int64(6))) else {
                throw .damaged("mutation \(id) has an unknown policy (\(r.int64(6)))")
            }
            if let status, st != status { continue }
            let ops: [Op]
            // Packed (layout 5 on) or, in rows written before, JSON text.
            let stored = r.bytes(1)
            do {
                ops = PackedOps.isPacked(stored) ? try PackedOps.decode(stored) : try Op.decode(r.text(1) ?? "")
            } catch { throw .damaged("the ops of mutation \(id) do not decode: \(error)") }
            guard !ops.isEmpty else { throw .damaged("mutation \(id) has no ops") }
            out.append(MutationRecord(
                id: id, ops: ops, status: st, attempts: Int(r.int64(3)), nextAttemptAt: r.int64(4),
                dedupeKey: r.text(5), policy: policy, lastError: r.text(7), retry: Int(r.int64(8)),
                queuePosition: r.isNull(9) ? nil : MutationID(bitPattern: r.int64(9))))
        }
        return out
    }

    /// How many stored mutations have each live status.
    func mutationCounts() throws(CLIError) -> [MutationStatus: Int] {
        let r = try db.prepare("SELECT status, count(*) FROM mutations GROUP BY status")
        var out: [MutationStatus: Int] = [.pending: 0, .inflight: 0, .failed: 0]
        while try r.step() {
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
        if try !db.columns("ended_chunks").isEmpty {
            let r = try db.prepare("SELECT chunk, bits FROM ended_chunks")
            while try r.step() {
                guard r.isBlob(1) else { throw .damaged("ended chunk \(r.int64(0)) is not a blob") }
                for byte in r.bytes(1) where byte != 0 {
                    for slot in 0..<4 {
                        switch (byte >> UInt8(slot * 2)) & 3 {
                        case 1: committed += 1
                        case 2: rolledBack += 1
                        case 3: throw .damaged("ended chunk \(r.int64(0)) holds an invalid code")
                        default: break
                        }
                    }
                }
            }
        } else if try !db.columns("ended").isEmpty {
            let r = try db.prepare("SELECT status, count(*) FROM ended GROUP BY status")
            while try r.step() {
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
        let r = try db.prepare("SELECT coll, count(*) FROM records GROUP BY coll ORDER BY coll")
        var out = [(collection: String, count: Int)]()
        while try r.step() { out.append((r.text(0) ?? "", Int(r.int64(1)))) }
        return out
    }

    /// The stored (confirmed) record, or nil.
    func record(_ collection: String, _ key: String) throws(CLIError) -> Record? {
        let r = try db.prepare("SELECT value FROM records WHERE coll = ? AND key = ?", collection, key)
        guard try r.step() else { return nil }
        return try StoreReader.parse(r.bytes(0), collection, key)
    }

    /// Calls `body` with each stored record of `collection` (nil: every one) whose key starts
    /// with `prefix`, in collection then key byte order (SQLite compares text bytewise).
    func records(collection: String?, prefix: String,
                 _ body: (Key, Key, Record) throws(CLIError) -> Void) throws(CLIError) {
        let r: Row
        if let collection {
            r = try db.prepare("SELECT coll, key, value FROM records WHERE coll = ? AND key >= ? ORDER BY coll, key", collection, prefix)
        } else {
            r = try db.prepare("SELECT coll, key, value FROM records ORDER BY coll, key")
        }
        let p = Key(prefix)
        while try r.step() {
            let c = Key(r.text(0) ?? ""), k = Key(r.text(1) ?? "")
            guard k.hasBytePrefix(p) else {
                if collection != nil { break }   // keys are in order: no later one matches
                continue
            }
            try body(c, k, try StoreReader.parse(r.bytes(2), c.string, k.string))
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
        let r = try db.prepare("PRAGMA quick_check")
        var problems = [String]()
        while try r.step() {
            let line = r.text(0) ?? ""
            if line != "ok" { problems.append(line) }
        }
        if !problems.isEmpty { throw .damaged("SQLite's check finds: " + problems.prefix(3).joined(separator: "; ")) }
    }

    // MARK: Other tables

    /// The number of loaded key ranges (freshness), nil when the layout has none.
    func loadedRanges() throws(CLIError) -> Int? {
        try db.columns("loaded").isEmpty ? nil : Int(try db.integer("SELECT count(*) FROM loaded") ?? 0)
    }

    /// The names of stored views, or nil when the layout stores none (views then live in the
    /// memory of the process that defined them).
    func views() throws(CLIError) -> [String]? {
        let columns = try db.columns("views")
        guard !columns.isEmpty else { return nil }
        guard columns.contains("name") else { return [] }
        let r = try db.prepare("SELECT name FROM views ORDER BY name")
        var out = [String]()
        while try r.step() { out.append(r.text(0) ?? "") }
        return out
    }
}
