import OptimistCore
import OptimistModel

// The rows of a store file as its readers take them: the library when it opens a store (of
// the current layout, after ``Schema/prepare(_:)``), and the command-line tool, which reads a
// private copy of a file of any layout without migrating it (Sources/OptimistCLI). Each
// query is given the columns the file's table has; see ``Schema/select(_:from:present:)``.

/// The `meta` table's one row.
package struct StoredMeta {
    package var clientID: String
    package var nextMutationID: Int64
    /// False while a process has the store open, and after it ended without closing it.
    package var closedCleanly: Bool
    /// Where the sync's next pull starts (nil: it never pulled).
    package var syncCursor: String?

    /// The row of a file whose `meta` table has the columns `present` (nil: the current
    /// layout's); nil when the table has no row (or no client id in it).
    package static func read(_ c: Connection, present: Set<String>? = nil) throws(OptimistError) -> StoredMeta? {
        let columns = ["client_id", "next_mutation_id", "closed_cleanly", "sync_cursor"]
        let s = try c.prepare(Schema.select(columns, from: .meta, present: present) + " WHERE one = 1")
        guard try s.step(), let clientID = s.text(0) else { return nil }
        return StoredMeta(clientID: clientID, nextMutationID: s.int64(1), closedCleanly: s.int64(2) != 0, syncCursor: s.text(3))
    }
}

/// The `mutations` table: the mutations not yet ended, one row each.
package enum MutationRows {
    /// The columns ``mutation(_:)`` reads, in its order; `ops` (column 1) is for
    /// ``StoredOps``.
    private static let columns = ["id", "ops", "status", "attempts", "next_attempt_ms", "dedupe_key", "policy",
                                  "last_error", "retry", "queue_position"]

    /// Every row of the current layout, in id order.
    static let query = query(present: nil)

    /// Every row of a file whose `mutations` table has the columns `present` (nil: the
    /// current layout's), in id order.
    package static func query(present: Set<String>?) -> String {
        Schema.select(columns, from: .mutations, present: present) + " ORDER BY id"
    }

    /// Why a row does not decode. The raw value is the column's.
    package enum Fault: Error {
        /// Not a live status (a mutation that ended has no row).
        case status(MutationID, Int64)
        case policy(MutationID, Int64)

        var id: MutationID {
            switch self {
            case .status(let id, _), .policy(let id, _): id
            }
        }
    }

    /// The mutation in the current row of a ``query(present:)`` statement, without its ops.
    /// The status is checked before the policy.
    package static func mutation(_ s: Statement) throws(Fault) -> MutationRecord {
        let id = MutationID(bitPattern: s.int64(0))
        guard let status = MutationStatus(rawValue: Int32(truncatingIfNeeded: s.int64(2))), !status.isEnded else {
            throw .status(id, s.int64(2))
        }
        guard let policy = FailurePolicy(rawValue: Int32(truncatingIfNeeded: s.int64(6))) else { throw .policy(id, s.int64(6)) }
        return MutationRecord(
            id: id, ops: [], status: status, attempts: Int(s.int64(3)), nextAttemptAt: s.int64(4),
            dedupeKey: s.text(5), policy: policy, lastError: s.text(7), retry: Int(s.int64(8)),
            queuePosition: s.isNull(9) ? nil : MutationID(bitPattern: s.int64(9)))
    }
}

extension Schema {
    /// The queries the command-line tool makes and the library does not (the library's own
    /// are beside their use), plus the ones they share.
    package enum Query {
        /// A record's value, by collection (1) and key (2).
        package static let record = "SELECT value FROM records WHERE coll = ? AND key = ?"
        /// coll, key, value of every record, in collection then key order.
        package static let records = "SELECT coll, key, value FROM records ORDER BY coll, key"
        /// coll, key, value of the records of collection (1) from key (2) on, in key order.
        package static let recordsFrom = "SELECT coll, key, value FROM records WHERE coll = ? AND key >= ? ORDER BY coll, key"
        /// coll and its number of records, in collection order.
        package static let recordsPerCollection = "SELECT coll, count(*) FROM records GROUP BY coll ORDER BY coll"
        /// status and its number of mutations not yet ended.
        package static let mutationsPerStatus = "SELECT status, count(*) FROM mutations GROUP BY status"
        /// Layout 1: status and its number of ended mutations (later layouts keep ``EndedChunks``).
        package static let endedRowsPerStatus = "SELECT status, count(*) FROM ended GROUP BY status"
        /// coll, field (a JSON array of names) and number of entries of every index, in the
        /// order they were defined (layout 7 on).
        package static let indexes = """
            SELECT i.coll, i.field, (SELECT count(*) FROM index_entries AS e WHERE e.idx = i.id) FROM indexes AS i ORDER BY i.id
            """
        /// The number of key ranges marked loaded.
        package static let loadedRanges = "SELECT count(*) FROM loaded"

        /// The stored views' names, in order, for a `views` table with the columns `present`;
        /// nil when it has no names to list.
        package static func viewNames(present: Set<String>) -> String? {
            present.contains("name") ? "SELECT name FROM views ORDER BY name" : nil
        }
    }
}
