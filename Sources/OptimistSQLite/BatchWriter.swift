import CSQLite
import OptimistCore
import OptimistModel
import OptimistThreads

/// Writes folded batches, each in one transaction, with statements prepared once.
///
/// Durability: the file is in WAL mode. Batches written in the background commit with
/// `synchronous=NORMAL`: the commit reaches the operating system (so it survives the process
/// being killed, kill -9 included) but is not fsynced. A batch that a `flush` waits for
/// commits with `synchronous=FULL`, which fsyncs the WAL, and with it every earlier NORMAL
/// commit in it: after `flush` returns, its changes survive a power loss as well. Background
/// writes stay cheap; the fsync is paid once per flush, not once per batch.
final class BatchWriter {
    let connection: Connection
    private let normal, full: Statement
    private let begin, commit, rollback: Statement
    private let putRecord, putRecords, deleteRecord: Statement
    private let putMutation, putMutations, deleteMutation: Statement
    private let getChunk, putChunk: Statement
    private let pruneLoaded, putLoaded: Statement
    private let raiseNextID, putCursor: Statement
    private let putView: Statement
    private let clearStage, putStagePage, putRound, clearRound: Statement
    private var syncFull = false
    /// No mutation above this id has a row in the file. Most mutations end within the batch
    /// that would first write them (a tap and its commit come milliseconds apart), and those
    /// need no DELETE: skipping it halves the writer's statements for them.
    private var writtenMaxID: MutationID
    /// The ended-status chunk this writer last wrote, as the file holds it: taps end ids in
    /// the same chunk batch after batch, so its bytes need not be read back each time.
    /// Dropped when a transaction fails (the file then holds what it held before).
    private var lastChunk: (chunk: Int64, bits: [UInt8])?

    init(_ c: Connection) throws(OptimistError) {
        connection = c
        normal = try c.prepare("PRAGMA synchronous = NORMAL")
        full = try c.prepare("PRAGMA synchronous = FULL")
        begin = try c.prepare("BEGIN IMMEDIATE")
        commit = try c.prepare("COMMIT")
        rollback = try c.prepare("ROLLBACK")
        putRecord = try c.prepare("INSERT OR REPLACE INTO records(coll, key, value) VALUES (?, ?, ?)")
        putRecords = try c.prepare("INSERT OR REPLACE INTO records(coll, key, value) VALUES "
            + Array(repeating: "(?, ?, ?)", count: Self.rowsPerStatement).joined(separator: ", "))
        deleteRecord = try c.prepare("DELETE FROM records WHERE coll = ? AND key = ?")
        putMutation = try c.prepare(Self.insertMutations(rows: 1))
        putMutations = try c.prepare(Self.insertMutations(rows: Self.rowsPerStatement))
        deleteMutation = try c.prepare("DELETE FROM mutations WHERE id = ?")
        getChunk = try c.prepare("SELECT bits FROM ended_chunks WHERE chunk = ?")
        putChunk = try c.prepare("INSERT OR REPLACE INTO ended_chunks(chunk, bits) VALUES (?, ?)")
        // The same pruning as the store's own list: a newer load of a covering range makes
        // older ranges inside it redundant (TEXT compares bytewise, as keys do).
        pruneLoaded = try c.prepare("DELETE FROM loaded WHERE coll = ? AND from_key >= ? AND to_key <= ? AND at_ms <= ?")
        putLoaded = try c.prepare("INSERT INTO loaded(coll, from_key, to_key, at_ms) VALUES (?, ?, ?, ?)")
        raiseNextID = try c.prepare("UPDATE meta SET next_mutation_id = max(next_mutation_id, ?) WHERE one = 1")
        putCursor = try c.prepare("UPDATE meta SET sync_cursor = ? WHERE one = 1")
        putView = try c.prepare("INSERT OR REPLACE INTO views(name, coll, prefix, kind, confirmed_value) VALUES (?, ?, ?, ?, ?)")
        clearStage = try c.prepare("DELETE FROM pull_stage")
        putStagePage = try c.prepare("INSERT INTO pull_stage(ops) VALUES (?)")
        putRound = try c.prepare("INSERT OR REPLACE INTO pull_round(one, cursor, reset, staged) VALUES (1, ?, ?, ?)")
        clearRound = try c.prepare("DELETE FROM pull_round")
        writtenMaxID = MutationID(max(0, try c.scalarInt("SELECT coalesce(max(id), 0) FROM mutations")))
        try normal.run()
    }

    /// Writes `batch` in one transaction; all or nothing. With `sync`, the commit is fsynced
    /// (an empty batch then still commits a tiny transaction, to sync earlier commits).
    ///
    /// The connection's gate is held one statement at a time (a 32-row statement is one).
    /// The store's reads do not take it: they go through a connection of their own (see
    /// ``Connection``).
    func write(_ batch: JournalBatch, sync: Bool) throws(OptimistError) {
        let c = connection
        if sync != syncFull {
            try c.serially { () throws(OptimistError) in try (sync ? full : normal).run() }
            syncFull = sync
        }
        try c.serially { () throws(OptimistError) in try begin.run() }
        do throws(OptimistError) {
            try writeRecords(batch)
            try c.serially { () throws(OptimistError) in
                try writeRows(batch)
                if batch.maxID > 0 || sync {
                    raiseNextID.bind(1, Int64(bitPattern: batch.maxID &+ 1))
                    try raiseNextID.run()
                }
                try commit.run()
            }
            if let last = batch.mutations.keys.max(by: { $0.id < $1.id }) { writtenMaxID = max(writtenMaxID, last.id) }
        } catch {
            c.gate.locked { _ = try? rollback.run() }
            lastChunk = nil
            throw error
        }
    }

    /// Confirmed records in key order (B-tree inserts in order touch each page once, several
    /// times faster than in hash order on a big batch), each encoded outside the gate.
    /// Records set are written ``rowsPerStatement`` to a statement, the rest and the deletes
    /// one by one.
    private func writeRecords(_ batch: JournalBatch) throws(OptimistError) {
        let c = connection
        var puts: [Dictionary<RecordAddress, Record?>.Index] = []
        for i in batch.recordsInKeyOrder() {
            let (address, value) = batch.records[i]
            if value != nil {
                puts.append(i)
                continue
            }
            try c.serially { () throws(OptimistError) in
                deleteRecord.bind(1, address.collection)
                deleteRecord.bind(2, address.key)
                try deleteRecord.run()
            }
        }
        var at = 0
        var texts: [UInt8] = []
        var ends: [Int] = []
        while puts.count - at >= Self.rowsPerStatement {
            // A row's collection, key and JSON, one after another: three texts a row.
            texts.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            for i in puts[at..<(at + Self.rowsPerStatement)] {
                let (address, value) = batch.records[i]
                append(address.collection.string, to: &texts)
                ends.append(texts.count)
                append(address.key.string, to: &texts)
                ends.append(texts.count)
                JSONWriter.appendObject(value.unsafelyUnwrapped, to: &texts, sorted: true)
                ends.append(texts.count)
            }
            try c.serially { () throws(OptimistError) in try putRecords.run(texts: texts, ends: ends) { Int32($0) + 1 } }
            at += Self.rowsPerStatement
            // A reader the scheduler queued behind this thread gets the CPU between statements
            // (see `letWaitingThreadsRun`).
            letWaitingThreadsRun()
        }
        for i in puts[at...] {
            let (address, value) = batch.records[i]
            let text = JSONWriter.bytes(value.unsafelyUnwrapped)
            try c.serially { () throws(OptimistError) in
                try putRecord.run(text: address.collection.string, at: 1, address.key.string, at: 2, text, at: 3)
            }
        }
    }

    private func append(_ s: String, to bytes: inout [UInt8]) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private func writeRows(_ batch: JournalBatch) throws(OptimistError) {
        for v in batch.views.values {
            putView.bind(1, v.name)
            putView.bind(2, v.collection)
            putView.bind(3, v.prefix)
            putView.bind(4, v.kind.text)
            sqlite3_bind_double(putView.stmt, 5, v.confirmedValue)
            try putView.run()
        }
        // In id order; the ids are sorted, not the records (ten fields each, moved with their
        // retains and releases by a sort: a large share of the writer's time per mutation).
        let ids = batch.mutations.keys.sorted { $0.id < $1.id }
        var at = 0
        while ids.count - at >= Self.rowsPerStatement {
            try writeMutations(ids[at..<(at + Self.rowsPerStatement)], of: batch)
            at += Self.rowsPerStatement
        }
        for id in ids[at...] {
            let m = batch.mutations[id].unsafelyUnwrapped
            bind(m, to: putMutation, row: 0)
            try putMutation.run(blob: PackedOps.bytes(m.ops), at: 2)
        }
        try writeEnded(batch.endedInOrder ? batch.ended : batch.ended.sorted { $0.id < $1.id })
        if let cursor = batch.syncCursor {
            putCursor.bind(1, cursor)
            try putCursor.run()
        }
        // A pull round's staging, in the transaction that writes the records it ends with:
        // the file holds the round staged or the round applied, never half of it.
        if batch.clearsStage { try clearStage.run() }
        for page in batch.stagedPages { try putStagePage.run(blob: PackedOps.bytes(page), at: 1) }
        if let apply = batch.appliesRound {
            try applyStagedRound(reset: apply.reset)
            try clearStage.run()
        }
        if let round = batch.pullRound {
            if let round {
                putRound.bind(1, round.cursor)
                putRound.bind(2, round.reset ? 1 : 0)
                putRound.bind(3, round.staged)
                try putRound.run()
            } else {
                try clearRound.run()
            }
        }
        for (c, r) in batch.loaded {
            pruneLoaded.bind(1, c)
            pruneLoaded.bind(2, r.from)
            pruneLoaded.bind(3, r.to)
            pruneLoaded.bind(4, r.at)
            try pruneLoaded.run()
            putLoaded.bind(1, c)
            putLoaded.bind(2, r.from)
            putLoaded.bind(3, r.to)
            putLoaded.bind(4, r.at)
            try putLoaded.run()
        }
    }
}

extension BatchWriter {
    /// Applies the staged round's pages to `records`, in order, a page in memory at a time
    /// (every record removed first when the round began with a reset): a round of a million
    /// records ends without the store holding it. Inside the batch's transaction.
    private func applyStagedRound(reset: Bool) throws(OptimistError) {
        let c = connection
        if reset { try c.exec("DELETE FROM records") }
        let pages = try c.prepare("SELECT page, ops FROM pull_stage ORDER BY page")
        let getRecord = try c.prepare("SELECT value FROM records WHERE coll = ? AND key = ?")
        var text: [UInt8] = []
        while try pages.step() {
            let page = pages.int64(0)
            let ops = try pages.withBytes(1) { (b) throws(OptimistError) -> [Op] in
                do { return try PackedOps.decode(b) } catch { throw .corrupt("staged pull page \(page): packed ops: \(error)") }
            }
            for op in ops {
                var value: Record?
                switch op {
                case .put(_, _, let v): value = v
                case .delete: value = nil
                default:
                    // Not an absolute change (the protocol sends none): applied to the record
                    // as it stands, as the store would.
                    getRecord.bind(1, op.collection)
                    getRecord.bind(2, op.key)
                    var current: Record?
                    if try getRecord.step() {
                        let a = RecordAddress(collection: op.collection, key: op.key)
                        current = try getRecord.withBytes(0) { (b) throws(OptimistError) in try SQLiteStorage.parse(b, a) }
                    }
                    getRecord.reset()
                    // One that does not fit leaves the record as it stands: failing here would
                    // keep the batch, and every change after it, from the file for good.
                    guard case .success(let v) = op.apply(to: current) else { continue }
                    value = v
                }
                if let value {
                    text.removeAll(keepingCapacity: true)
                    JSONWriter.appendObject(value, to: &text, sorted: true)
                    try putRecord.run(text: op.collection.string, at: 1, op.key.string, at: 2, text, at: 3)
                } else {
                    deleteRecord.bind(1, op.collection)
                    deleteRecord.bind(2, op.key)
                    try deleteRecord.run()
                }
            }
            letWaitingThreadsRun()
        }
        pages.reset()
    }

    /// Rows written by one statement of ``putMutations`` or ``putRecords``: a statement's own
    /// cost (opening its cursor, halting) is a large share of a one-row insert's, and a burst
    /// of taps or a server batch writes thousands of rows a batch.
    static let rowsPerStatement = 32

    /// `INSERT OR REPLACE` of `rows` mutations, their ten columns each in ``bind(_:to:row:)``'s order.
    static func insertMutations(rows: Int) -> String {
        let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT OR REPLACE INTO mutations(id, ops, status, attempts, next_attempt_ms, dedupe_key, policy, last_error, "
            + "retry, queue_position) VALUES " + Array(repeating: row, count: rows).joined(separator: ", ")
    }

    /// Binds every column of `m` but its ops (the second) as row `row` of `statement`.
    private func bind(_ m: MutationRecord, to statement: Statement, row: Int32) {
        let at = row * 10
        statement.bind(at + 1, Int64(bitPattern: m.id))
        statement.bind(at + 3, Int64(m.status.rawValue))
        statement.bind(at + 4, m.attempts)
        statement.bind(at + 5, m.nextAttemptAt)
        statement.bind(at + 6, m.dedupeKey)
        statement.bind(at + 7, Int64(m.policy.rawValue))
        statement.bind(at + 8, m.lastError)
        statement.bind(at + 9, m.retry)
        if m.queuePosition == m.id { statement.bindNull(at + 10) } else { statement.bind(at + 10, Int64(bitPattern: m.queuePosition)) }
    }

    /// Saves ``rowsPerStatement`` mutations with one statement; their packed ops
    /// (``PackedOps``) are written one after another into one buffer, bound in place.
    private func writeMutations(_ ids: ArraySlice<MutationKey>, of batch: JournalBatch) throws(OptimistError) {
        var packed: [UInt8] = []
        packed.reserveCapacity(ids.count * 256)
        var ends: [Int] = []
        ends.reserveCapacity(ids.count)
        for (row, id) in ids.enumerated() {
            let m = batch.mutations[id].unsafelyUnwrapped
            bind(m, to: putMutations, row: Int32(row))
            PackedOps.append(m.ops, to: &packed)
            ends.append(packed.count)
        }
        try putMutations.run(texts: packed, ends: ends, blobs: true) { row in Int32(row) * 10 + 2 }
    }

    /// Deletes the rows of ended mutations an earlier batch wrote, and sets their codes in
    /// their chunks: `sorted` is in id order, so each touched chunk is read (unless it is
    /// ``lastChunk``), changed and written back once.
    private func writeEnded(_ sorted: [(id: MutationID, status: MutationStatus)]) throws(OptimistError) {
        var i = 0
        while i < sorted.count {
            let chunk = EndedChunks.chunk(of: sorted[i].id)
            if lastChunk?.chunk != chunk { lastChunk = (chunk, try readChunk(chunk)) }
            while i < sorted.count, EndedChunks.chunk(of: sorted[i].id) == chunk {
                let (id, status) = sorted[i]
                if id <= writtenMaxID {
                    deleteMutation.bind(1, Int64(bitPattern: id))
                    try deleteMutation.run()
                }
                EndedChunks.set(&lastChunk!.bits, id, status)
                i += 1
            }
            putChunk.bind(1, chunk)
            putChunk.bindBlob(2, lastChunk!.bits)
            try putChunk.run()
        }
    }

    /// A chunk's bytes as the file holds them (zeros when it has no row yet).
    private func readChunk(_ chunk: Int64) throws(OptimistError) -> [UInt8] {
        getChunk.bind(1, chunk)
        defer { getChunk.reset() }
        guard try getChunk.step() else { return [UInt8](repeating: 0, count: EndedChunks.bytesPerChunk) }
        guard getChunk.isBlob(0) else { throw .corrupt("ended chunk \(chunk) is not a blob") }
        let bits = getChunk.withBlob(0) { Array($0) }
        guard bits.count == EndedChunks.bytesPerChunk else {
            throw .corrupt("ended chunk \(chunk) has \(bits.count) bytes, not \(EndedChunks.bytesPerChunk)")
        }
        return bits
    }

    /// Records a clean close (after the last batch was written): the next open need not skip ids.
    func markClosed() throws(OptimistError) {
        try connection.serially { () throws(OptimistError) in try connection.exec("PRAGMA synchronous = FULL; UPDATE meta SET closed_cleanly = 1 WHERE one = 1") }
    }

    /// Caps the file's size in pages (`nil`: SQLite's own maximum).
    func limitPages(_ pages: Int?) throws(OptimistError) {
        try connection.serially { () throws(OptimistError) in try connection.exec("PRAGMA max_page_count = \(pages ?? 4_294_967_294)") }
    }
}
