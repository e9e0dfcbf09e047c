import CSQLite
import OptimistCore
import OptimistModel

/// The confirmed records of a store file: in the file's `records` table, read on demand
/// through a bounded cache of parsed records.
///
/// The background writer lags the store by a few milliseconds (longer for a big batch or a
/// full disk), so a record the store confirmed may not be in the file yet. Such records stay
/// in ``unwritten`` (outside the cache's budget, never evicted) until the journal append that
/// carries them is committed: this storage numbers the appends (``sealAppend()``), the store
/// hands each number to the journal with its entries, and the writer publishes the highest
/// number it committed. Reads look there first, so they never see the file behind
/// the store; scans and view aggregates merge it over the file's rows.
///
/// Used under the store's lock (one call at a time); the file is read through a connection of
/// its own (see ``Connection``), which sees the writer's last commit and never waits for it.
final class SQLiteStorage: ConfirmedStorage, @unchecked Sendable {
    // Stored properties are `@exclusivity(unchecked)`: ordered by the store's locks (see `Engine`).
    let connection: Connection
    private let writer: WriterState
    @exclusivity(unchecked) private var getRecord: Statement?
    @exclusivity(unchecked) private var getRecords: Statement?
    /// Scan statements by shape: (has a lower bound after a key, has an upper bound).
    @exclusivity(unchecked) private var scans: [Int: Statement] = [:]
    @exclusivity(unchecked) private var cache: RecordCache

    struct Unwritten {
        var value: Record?
        /// The journal append that carries it.
        var append: UInt64
    }
    @exclusivity(unchecked) private var unwritten: [RecordAddress: Unwritten] = [:]
    /// The number of the journal append that will carry the records set now. Only writers use
    /// it (``setRecord(_:_:_:)`` and ``sealAppend()``, under the writers' lock).
    @exclusivity(unchecked) private var currentAppend: UInt64 = 1

    func sealAppend() -> UInt64 {
        let sealed = currentAppend
        currentAppend &+= 1
        return sealed
    }

    /// See ``ConfirmedStorage/holdAppendForMoves()``: the append that ``setRecord(_:_:_:)``
    /// gives its records while set.
    @exclusivity(unchecked) private var movesAppend: UInt64?

    func holdAppendForMoves() { movesAppend = currentAppend &- 1 }

    func releaseAppendForMoves() { movesAppend = nil }

    /// Per collection, the lowest and highest key it has in the file or in ``unwritten`` (or
    /// ever had: a delete does not narrow them), once asked for. A key outside them has no
    /// row, so reading it costs no SQLite statement: a new record's first put (the common
    /// mutate) does not reach the file. Kept exact by ``setRecord(_:_:_:)``: the file gains
    /// rows only from this storage (the store holds it exclusively).
    @exclusivity(unchecked) private var bounds: [Key: KeyBounds] = [:]

    /// The lowest and highest key given a record by ``setRecord(_:_:_:)``, per collection whose
    /// ``bounds`` are not known yet: merged into them when they are read from the file. (Going
    /// through ``unwritten`` instead made a reader's get beside a big batch wait for
    /// milliseconds.)
    @exclusivity(unchecked) private var setBounds: [Key: KeyBounds] = [:]

    /// The collection whose ``bounds`` a read asked for last, and those bounds (kept equal to
    /// its entry in ``bounds``): a store's reads mostly name one collection, and this spares
    /// each a dictionary lookup and a copy of both keys.
    @exclusivity(unchecked) private var recentCollection: Key?
    @exclusivity(unchecked) private var recentBounds = KeyBounds.empty
    /// ``recentBounds``' keys' ``Key/orderingHead``s: most keys compare with the bounds by
    /// these two integers each, without a copy of the bounds (which retains and releases both
    /// keys, on every tap's read of a new record).
    @exclusivity(unchecked) private var recentHeads: KeyBounds.Heads?

    enum KeyBounds {
        case empty
        case range(Key, Key)

        mutating func include(_ key: Key) {
            switch self {
            case .empty: self = .range(key, key)
            case .range(let lowest, let highest):
                if key < lowest { self = .range(key, highest) } else if highest < key { self = .range(lowest, key) }
            }
        }

        func contains(_ key: Key) -> Bool {
            switch self {
            case .empty: return false
            case .range(let lowest, let highest): return !(key < lowest || highest < key)
            }
        }

        /// The lowest and highest key's ``Key/orderingHead``.
        struct Heads {
            var lowest: (UInt64, UInt64)
            var highest: (UInt64, UInt64)

            /// Whether a key with this head is in the range: nil when the head ties with one
            /// of the bounds' (then only the whole keys tell).
            @inline(__always) func contains(_ head: (UInt64, UInt64)) -> Bool? {
                if head < lowest || highest < head { return false }
                if lowest < head && head < highest { return true }
                return nil
            }
        }

        var heads: Heads? {
            guard case .range(let lowest, let highest) = self else { return nil }
            return Heads(lowest: lowest.orderingHead, highest: highest.orderingHead)
        }
    }
    /// Unwritten records in append order, so committed ones are let go in order; in chunks of
    /// ``orderChunk``, so that a finished chunk is dropped whole. (One array shifted down, or
    /// freed, once its head was let go stalled a reader's get for milliseconds after a big
    /// batch.)
    @exclusivity(unchecked) private var order: [[(address: RecordAddress, append: UInt64)]] = []
    /// How far into `order[0]` records were let go.
    @exclusivity(unchecked) private var orderHead = 0
    static let orderChunk = 1024

    init(connection: Connection, writer: WriterState, cacheBytes: Int, writerConnection: Connection) throws(OptimistError) {
        self.connection = connection
        self.writer = writer
        self.writerConnection = writerConnection
        cache = RecordCache(budget: cacheBytes)
        getRecord = try connection.serially { () throws(OptimistError) in
            try connection.prepare(Schema.Query.record)
        }
        indexes = try FileIndexes.load(connection)
    }

    // MARK: Indexes

    /// The writer's connection, which an index's definition writes through (see
    /// ``FileIndexes/define(on:_:_:)``).
    private let writerConnection: Connection
    /// The file's indexes, by collection (read at the open; a definition adds to them).
    @exclusivity(unchecked) private var indexes: [Key: [(field: FieldPath, id: Int64)]]
    /// Index reads by shape (id × 2, plus 1 with an upper bound), prepared once each.
    @exclusivity(unchecked) private var indexReads: [Int64: Statement] = [:]

    func defineIndex(_ collection: Key, _ field: FieldPath) throws(OptimistError) {
        if indexes[collection]?.contains(where: { $0.field == field }) == true { return }
        let id = try FileIndexes.define(on: writerConnection, collection, field)
        indexes[collection, default: []].append((field, id))
    }

    func indexedFields(_ collection: Key) -> [FieldPath] { indexes[collection]?.map(\.field) ?? [] }

    func indexedRecords(_ collection: Key, _ field: FieldPath, _ spans: [IndexBounds]) throws(OptimistError) -> [(key: Key, value: Record)]? {
        guard let id = indexes[collection]?.first(where: { $0.field == field })?.id else { return nil }
        var out = [(key: Key, value: Record)]()
        // Unwritten records (the writer's lag) replace what the file has for their keys: the
        // file's rows for them are skipped, and their own values are checked against the spans.
        var mine = Set<Key>()
        for (a, u) in unwritten where a.collection == collection {
            mine.insert(a.key)
            if let v = u.value, spans.contains(where: { $0.contains(IndexKey.encode(field.value(in: v, key: a.key))) }) {
                out.append((a.key, v))
            }
        }
        try connection.serially { () throws(OptimistError) in
            for span in spans {
                // A statement per index and shape (with an upper bound or not), prepared once.
                // No read transaction around the spans: the caller checks every row it gets.
                let shape = id * 2 + (span.upper == nil ? 0 : 1)
                let s: Statement
                if let prepared = indexReads[shape] { s = prepared } else {
                    s = try connection.prepare("""
                        SELECT r.key, r.value FROM index_entries AS e CROSS JOIN records AS r ON r.coll = ?1 AND r.key = e.key
                        WHERE e.idx = \(id) AND e.sort >= ?2\(span.upper == nil ? "" : " AND e.sort < ?3") ORDER BY e.sort, e.key
                        """)
                    indexReads[shape] = s
                }
                s.bind(1, collection)
                s.bindBlob(2, span.lower.isEmpty ? [0] : span.lower)
                if let upper = span.upper { s.bindBlob(3, upper) }
                defer { s.reset() }
                while try s.step() {
                    let key = Key(s.text(0) ?? "")
                    if mine.contains(key) { continue }
                    let value = try s.withBytes(1) { (b) throws(OptimistError) in try Self.parse(b, RecordAddress(collection: collection, key: key)) }
                    out.append((key, value))
                }
            }
        }
        return out
    }

    // MARK: Reads

    func record(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        // A key outside the collection's key range (a new record: today's log, a fresh id) is
        // answered by the bounds at once, before the lookups below (and before building their
        // address, which copies both keys): the bounds cover the unwritten records too, and
        // caching the answer would cost more than it saves.
        guard try mayBeInFile(collection, key) else { return nil }
        let a = RecordAddress(collection: collection, key: key)
        if !unwritten.isEmpty, let u = unwritten[a] { return u.value }
        if let hit = cache.lookup(a) { return hit }
        let value = try fileRecord(a)
        cache.insert(a, value)
        return value
    }

    func uncachedRecord(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        guard try mayBeInFile(collection, key) else { return nil }  // (as in ``record(_:_:)``)
        let a = RecordAddress(collection: collection, key: key)
        if !unwritten.isEmpty, let u = unwritten[a] { return u.value }
        if cache.count > 0, let hit = cache.lookup(a) { return hit }
        return try fileRecord(a)
    }

    func uncachedRecords(_ collection: Key, _ keys: [Key]) throws(OptimistError) -> [Key: Record] {
        var out = [Key: Record]()  // often few of the keys have a record: grown as found
        // Keys outside the collection's range of keys (in the file, or set since the open) have
        // no record anywhere: pending mutations are often new records (today's logs, fresh ids)
        // that sort after every confirmed one, and two index seeks spare each of them a probe
        // and the lookups below (a reopen with 100k pending asks for all of its keys at once).
        let bounds = try keyBounds(collection)
        guard case .range = bounds else { return out }
        var ask = [Key]()
        for k in keys where bounds.contains(k) {
            let a = RecordAddress(collection: collection, key: k)
            if !unwritten.isEmpty, let u = unwritten[a] {
                if let v = u.value { out[k] = v }
            } else if cache.count > 0, let hit = cache.lookup(a) {
                if let v = hit { out[k] = v }
            } else if containsNUL(k) {
                // SQLite's JSON text ends a string at NUL: such a key is read on its own.
                if let v = try fileRecord(a) { out[k] = v }
            } else {
                ask.append(k)
            }
        }
        // The keys go in as one JSON array per chunk; SQLite walks it and looks each key up
        // (CROSS JOIN keeps the array as the outer loop, so each row is one primary-key probe).
        var start = 0
        while start < ask.count {
            let end = min(ask.count, start + 8192)
            var list: [UInt8] = [UInt8(ascii: "[")]
            list.reserveCapacity((end - start) * 24)
            for i in start..<end {
                if i > start { list.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(ask[i].string, into: &list)
            }
            list.append(UInt8(ascii: "]"))
            try connection.serially { () throws(OptimistError) in
                if getRecords == nil {
                    getRecords = try connection.prepare("""
                        SELECT r.key, r.value FROM json_each(?1) AS j CROSS JOIN records AS r
                        ON r.coll = ?2 AND r.key = j.value
                        """)
                }
                guard let s = getRecords else { throw .misuse("the store is closed") }
                s.bindText(1, bytes: list)
                s.bind(2, collection)
                defer { s.reset() }
                while try s.step() {
                    let key = Key(s.text(0) ?? "")
                    out[key] = try s.withBytes(1) { (b) throws(OptimistError) in
                        try Self.parse(b, RecordAddress(collection: collection, key: key))
                    }
                }
            }
            start = end
        }
        return out
    }

    /// Whether the file may hold `collection`'s record at `key`: false when `key` lies outside
    /// every key the collection has in the file or will have once the writer catches up (see
    /// ``bounds``).
    private func mayBeInFile(_ collection: Key, _ key: Key) throws(OptimistError) -> Bool {
        if recentCollection != collection {
            recentBounds = try keyBounds(collection)
            recentHeads = recentBounds.heads
            recentCollection = collection
        }
        guard let heads = recentHeads else { return false }  // no key at all
        if let answer = heads.contains(key.orderingHead) { return answer }
        return recentBounds.contains(key)
    }

    /// ``recentBounds`` and ``recentHeads`` take in `key`: only the head of a bound that
    /// moves is computed (a commit of a new record, the common one, moves the highest).
    private func includeRecent(_ key: Key) {
        let head = key.orderingHead
        switch recentHeads?.contains(head) {
        case true?: return
        case false?:
            recentBounds.include(key)
            if head < recentHeads!.lowest { recentHeads!.lowest = head } else { recentHeads!.highest = head }
        case nil:  // no bounds yet, or a tie with one: both from the keys
            recentBounds.include(key)
            recentHeads = recentBounds.heads
        }
    }

    /// ``bounds`` of `collection`, read from the file (two index seeks) the first time.
    private func keyBounds(_ collection: Key) throws(OptimistError) -> KeyBounds {
        if let known = bounds[collection] { return known }
        var b = try connection.serially { () throws(OptimistError) -> KeyBounds in
            var keys = [Key]()
            for sql in ["SELECT key FROM records WHERE coll = ?1 ORDER BY key LIMIT 1",
                        "SELECT key FROM records WHERE coll = ?1 ORDER BY key DESC LIMIT 1"] {
                let s = try connection.prepare(sql)
                s.bind(1, collection)
                guard try s.step() else { return .empty }
                keys.append(Key(s.text(0) ?? ""))
            }
            return .range(keys[0], keys[1])
        }
        // Records the writer may not have written yet will be in the file: they count already.
        if let set = setBounds.removeValue(forKey: collection), case .range(let lowest, let highest) = set {
            b.include(lowest)
            b.include(highest)
        }
        bounds[collection] = b
        return b
    }

    /// The record as the file holds it.
    private func fileRecord(_ a: RecordAddress) throws(OptimistError) -> Record? {
        try connection.serially { () throws(OptimistError) -> Record? in try fileRecordLocked(a) }
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ a: RecordAddress) throws(OptimistError) -> Record {
        do { return try JSONParser.parseObject(bytes) } catch {
            throw .corrupt("record \(a.collection)/\(a.key) in the store file is damaged (not a JSON object: \(error))")
        }
    }

    func scan(_ collection: Key, prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
        // Unwritten keys of the range, sorted: usually none or a few.
        var pending = [Key]()
        for a in unwritten.keys where a.collection == collection && a.key.hasBytePrefix(prefix) {
            if let after, !(after < a.key) { continue }
            pending.append(a.key)
        }
        pending.sort()
        return try scanMerging(pending, value: { unwritten[RecordAddress(collection: collection, key: $0)]?.value },
                               after: after, limit: limit) { (from, limit) throws(OptimistError) in
            try fileRows(collection, prefix: prefix, after: from, limit: limit)
        }
    }

    /// Up to `limit` rows of the file under `prefix` after `after`, in key order.
    private func fileRows(_ collection: Key, prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
        let upper = Self.upperBound(prefix)
        let shape = (after != nil ? 1 : 0) | (upper != nil ? 2 : 0)
        let s: Statement
        if let cached = scans[shape] { s = cached } else {
            var sql = "SELECT key, value FROM records WHERE coll = ?1 AND key >= ?2"
            if after != nil { sql += " AND key > ?3" }
            if upper != nil { sql += " AND key < ?4" }
            sql += " ORDER BY key LIMIT ?5"
            s = try connection.serially { () throws(OptimistError) in try connection.prepare(sql) }
            scans[shape] = s
        }
        return try connection.serially { () throws(OptimistError) -> [(key: Key, value: Record)] in
            s.bind(1, collection)
            s.bind(2, prefix)
            if let after { s.bind(3, after) }
            if let upper { s.bindText(4, bytes: upper) }
            s.bind(5, limit)
            defer { s.reset() }
            var out = [(key: Key, value: Record)]()
            while try s.step() {
                let key = Key(s.text(0) ?? "")
                let value = try s.withBytes(1) { (b) throws(OptimistError) in try Self.parse(b, RecordAddress(collection: collection, key: key)) }
                out.append((key, value))
            }
            return out
        }
    }

    /// The smallest byte string above every key that starts with `prefix`: the prefix with
    /// its last byte raised by one (UTF-8 never has 0xFF, so no carry); nil for "" (no bound).
    static func upperBound(_ prefix: Key) -> [UInt8]? {
        var bytes = Array(prefix.string.utf8)
        guard let last = bytes.popLast() else { return nil }
        bytes.append(last + 1)
        return bytes
    }

    // MARK: Views

    /// One query over the file's rows (SQLite's JSON functions pick the field out, so no
    /// record is parsed here), corrected by the records the file does not have yet.
    func aggregate(_ collection: Key, prefix: Key, kind: ViewKind) throws(OptimistError) -> Double {
        let upper = Self.upperBound(prefix)
        var sql: String
        var path: String?
        switch kind {
        case .count:
            sql = "SELECT count(*) FROM records WHERE coll = ?1 AND key >= ?2"
        case .sum(let field):
            // A JSON path names the member as a quoted label; a name with a quote or a
            // backslash cannot be spelled there, and is summed by parsing the records instead.
            if field.string.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C }) {
                return try aggregateByScanning(collection, prefix: prefix, kind: kind)
            }
            path = "$.\"" + field.string + "\""
            sql = "SELECT total(json_extract(value, ?3)) FROM records WHERE coll = ?1 AND key >= ?2"
                + " AND json_type(value, ?3) IN ('integer', 'real')"
        }
        if upper != nil { sql += " AND key < ?4" }
        return try connection.serially { () throws(OptimistError) -> Double in
            // One read transaction: the file's total and the rows of unwritten records taken
            // back out of it are read from the same commit, whatever the writer does meanwhile.
            try connection.exec("BEGIN")
            defer { try? connection.exec("COMMIT") }
            let s = try connection.prepare(sql)
            s.bind(1, collection)
            s.bind(2, prefix)
            if let path { s.bind(3, path) }
            if let upper { s.bindText(4, bytes: upper) }
            defer { s.reset() }
            guard try s.step() else { return 0 }
            var total = s.double(0)
            // Unwritten records replace what the file's rows added.
            for (a, u) in unwritten where a.collection == collection && a.key.hasBytePrefix(prefix) {
                total += kind.contribution(u.value) - kind.contribution(try fileRecordLocked(a))
            }
            return total
        }
    }

    /// ``fileRecord(_:)`` for a caller already holding the gate.
    private func fileRecordLocked(_ a: RecordAddress) throws(OptimistError) -> Record? {
        guard let getRecord else { throw .misuse("the store is closed") }
        getRecord.bind(1, a.collection)
        getRecord.bind(2, a.key)
        defer { getRecord.reset() }
        guard try getRecord.step() else { return nil }
        return try getRecord.withBytes(0) { (bytes) throws(OptimistError) in try Self.parse(bytes, a) }
    }

    // MARK: Writes

    func setRecord(_ collection: Key, _ key: Key, _ value: Record?) {
        let a = RecordAddress(collection: collection, key: key)
        // The store appends this change's journal entries after it, as the append numbered
        // next (``sealAppend()``).
        let append = movesAppend ?? currentAppend
        unwritten[a] = Unwritten(value: value, append: append)
        if value != nil {
            if recentCollection == collection, recentHeads?.contains(key.orderingHead) == true {
                // Strictly inside the bounds of the collection read last (kept equal to its
                // entry in `bounds`): neither bound moves. The common commit, of a record the
                // collection has, looks nothing up and compares no keys.
            } else if let i = bounds.index(forKey: collection) {
                bounds.values[i].include(key)
                if recentCollection == collection { includeRecent(key) }
            } else {
                setBounds[collection, default: .empty].include(key)
            }
        }
        if order.isEmpty || order[order.count - 1].count == Self.orderChunk {
            order.append([])
            order[order.count - 1].reserveCapacity(Self.orderChunk)
        }
        order[order.count - 1].append((a, append))
        cache.update(a, value)  // still right once written; not added when not cached
    }

    /// Unwritten records let go per call at most while the writer is still behind (once it has
    /// written the newest, ``releaseWritten()`` lets a big table go at once): a 100k-record
    /// batch being written is let go over many calls (readers' too), so no one call pays for
    /// all of it. Letting a record go frees it (slow when they are cold): thousands in one call
    /// stalled a reader's get for milliseconds.
    static let releasePerCall = 256

    /// While set (a staged change moving records in), calls let go of nothing: the room
    /// ``prepareMoves(_:)`` makes outside the lock stays valid until it is put in place.
    @exclusivity(unchecked) var holdsUpkeep = false

    func prepareMoves(_ records: [RecordMove]) -> (any StagedMoves)? {
        let n = records.count
        let moves = Moves(storage: self, records: records)
        if unwritten.capacity < unwritten.count + n {
            var grown = unwritten
            grown.reserveCapacity(unwritten.count + n)
            moves.unwritten = grown
        }
        return moves.unwritten == nil ? nil : moves
    }

    /// ``unwritten`` regrown outside the lock (a rehash of 100k entries inside a move's hold
    /// made readers wait milliseconds); the moves themselves are ``setRecord``. (``order``
    /// grows a chunk at a time: it needs no room made.)
    private final class Moves: StagedMoves {
        let storage: SQLiteStorage
        let records: [RecordMove]
        var unwritten: [RecordAddress: Unwritten]?

        init(storage: SQLiteStorage, records: [RecordMove]) {
            self.storage = storage
            self.records = records
        }

        func installRoom() -> Any {
            var old: [RecordAddress: Unwritten]?
            if let grown = unwritten.take() {
                old = storage.unwritten
                storage.unwritten = grown
            }
            return old as Any
        }

        func move(_ index: Int) {
            let r = records[index]
            storage.setRecord(r.collection, r.key, r.value)
        }
    }

    func endCall() {
        if !holdsUpkeep { releaseWritten() }
        cache.trim()
    }

    /// Lets go of up to ``releasePerCall`` unwritten records the file has now. They are freed
    /// by the writer thread (``WriterState/discard(_:)``), not here: freeing records another
    /// thread allocated takes that thread's malloc arena lock, and a reader's get that did so
    /// beside a big batch waited for it for milliseconds.
    private func releaseWritten() {
        // Nothing unwritten to let go of (most calls between big changes): no more work.
        if orderHead == 0, order.isEmpty || (order.count == 1 && order[0].isEmpty), !unwrittenRoomToFree { return }
        let committed = writer.committedCount.load(ordering: .acquiring)
        // The newest record set is in the file, so every one is: the whole table goes in one
        // step, to the writer thread, rather than 256 a call. After a big load, letting it go
        // 256 a call made the next thousands of taps each pay for cold entries of a big table.
        // Only a table past the room an empty one keeps (``keptUnwrittenRoom``): a smaller one
        // goes in a few calls, and keeps its room for the next changes instead of regrowing.
        if unwritten.count > Self.keptUnwrittenRoom, let newest = order.last?.last, newest.append <= committed {
            var table: [RecordAddress: Unwritten] = [:]
            var chunks: [[(address: RecordAddress, append: UInt64)]] = []
            swap(&table, &unwritten)
            swap(&chunks, &order)
            orderHead = 0
            writer.discard([table, chunks] as [Any])
            return
        }
        var budget = Self.releasePerCall
        var released: [Unwritten] = []
        while budget > 0, !order.isEmpty {
            if orderHead == order[0].count {
                // A finished chunk goes whole; the last one is emptied and kept for reuse
                // (emptied once: most calls find it empty, and removeAll is not free).
                if order.count == 1 {
                    if orderHead > 0 { order[0].removeAll(keepingCapacity: true) }
                    orderHead = 0
                    break
                }
                order.removeFirst()
                orderHead = 0
                if order[0].isEmpty { break }
                continue
            }
            let (a, append) = order[0][orderHead]
            guard append <= committed else { break }
            orderHead += 1
            budget -= 1
            if let i = unwritten.index(forKey: a), unwritten.values[i].append == append {
                // The file has it (and the cache, if it was read).
                if released.isEmpty { released.reserveCapacity(Self.releasePerCall) }
                released.append(unwritten.remove(at: i).value)
            }
        }
        var garbage: [Any] = []
        if !released.isEmpty { garbage.append(released) }
        if unwrittenRoomToFree {
            // The table's room too (100k records' worth after a big batch).
            var empty: [RecordAddress: Unwritten] = [:]
            swap(&empty, &unwritten)
            garbage.append(empty)
        }
        if !garbage.isEmpty { writer.discard(garbage) }
    }

    /// Whether the unwritten table is empty but keeps more room than ``keptUnwrittenRoom``,
    /// which ``releaseWritten()`` then frees.
    private var unwrittenRoomToFree: Bool { unwritten.isEmpty && unwritten.capacity > Self.keptUnwrittenRoom }

    /// The room an empty unwritten table keeps for the next changes (records).
    private static let keptUnwrittenRoom = 4096

    var cacheUsage: (entries: Int, bytes: Int) { (cache.count, cache.bytes) }
    var cacheBudget: Int { cache.budget }

    /// Finalizes the statements and closes the reading connection, before the writer closes
    /// its own (a statement or connection left would keep the file's lock, and its log, open).
    func close() {
        connection.gate.locked {
            getRecord = nil
            getRecords = nil
            scans = [:]
            indexReads = [:]
            bounds = [:]
            setBounds = [:]
            recentCollection = nil
            connection.close()
        }
        cache.removeAll()
        unwritten = [:]
        order = []
        orderHead = 0
    }

    /// Drops what this storage knows of the file's records (see ``forgetConfirmed()``): the
    /// cache, the unwritten records (all written), and the key bounds.
    func forgetEverythingRead() {
        cache.removeAll()
        if !unwritten.isEmpty || !order.isEmpty {
            var table: [RecordAddress: Unwritten] = [:]
            var chunks: [[(address: RecordAddress, append: UInt64)]] = []
            swap(&table, &unwritten)
            swap(&chunks, &order)
            writer.discard([table, chunks] as [Any])  // freed by the writer thread (see releaseWritten)
        }
        orderHead = 0
        bounds = [:]
        setBounds = [:]
        recentCollection = nil
        recentBounds = .empty
        recentHeads = nil
    }

    /// Confirmed records not yet in the file (for tests).
    var unwrittenCount: Int { unwritten.count }

    /// Where the records not yet in the file are.
    var unwrittenAddresses: Dictionary<RecordAddress, Unwritten>.Keys { unwritten.keys }
}

/// Whether a byte of `key` is NUL, read from the string's bits when it is short ASCII (most
/// keys): the generic search over its UTF-8 view cost a large part of
/// ``SQLiteStorage/uncachedRecords(_:_:)``'s work per key in a reopen.
private func containsNUL(_ key: Key) -> Bool {
    if let (words, count) = SmallString.asciiBits(key.string) {
        return withUnsafeBytes(of: words) { b in (0..<count).contains { b[$0] == 0 } }
    }
    return key.string.utf8.contains(0)
}
