import OptimistModel
/// The confirmed records of an in-memory store, compact: each record as its JSON bytes
/// (members in no particular order) in one byte arena per collection, found through a hash index of 8-byte slots, with
/// a bounded cache of parsed records in front.
///
/// A parsed record costs many times its JSON (a dictionary of enum values and strings);
/// the bytes cost about their size. Per record this keeps the arena bytes, a dictionary
/// entry (key and slot) and the sorted key list scans need, plus the cache's budget.
package final class MemoryStorage: ConfirmedStorage {
    // Stored properties are `@exclusivity(unchecked)`: ordered by the store's locks (see `Engine`).
    @exclusivity(unchecked) private var tables: [Key: Table] = [:]
    /// The last number ``sealAppend()`` gave (an in-memory store has a sink only in tests).
    @exclusivity(unchecked) private var appends: UInt64 = 0
    @exclusivity(unchecked) private var cache: RecordCache

    package init(cacheBytes: Int = defaultCacheBytes) {
        cache = RecordCache(budget: cacheBytes)
    }

    package func record(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        let a = RecordAddress(collection: collection, key: key)
        if let hit = cache.lookup(a) { return hit }
        let value = try tables[collection]?.record(key)
        cache.insert(a, value)
        return value
    }

    package func uncachedRecord(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        if let hit = cache.lookup(RecordAddress(collection: collection, key: key)) { return hit }
        return try tables[collection]?.record(key)
    }

    package func setRecord(_ collection: Key, _ key: Key, _ value: Record?) { write(collection, key, value, encoded: nil) }

    /// ``setRecord(_:_:_:)``, with the record's bytes when they were encoded ahead (a staged
    /// change's moves: see ``prepareMoves(_:)``).
    private func write(_ collection: Key, _ key: Key, _ value: Record?, encoded: UnsafeRawBufferPointer?) {
        let t = table(collection)
        if !indexes.isEmpty, let list = indexes[collection] {
            let old = try? uncachedRecord(collection, key)
            for index in list { index.replace(key, old: old, new: value) }
        }
        t.set(key, value, encoded: encoded)
        if defersUpkeep, !upkeepDue, t.upkeepDue { upkeepDue = true }
        cache.update(RecordAddress(collection: collection, key: key), value)
    }

    /// The collection's table, made when it has none yet.
    private func table(_ collection: Key) -> Table {
        if let t = tables[collection] { return t }
        let t = Table()
        t.holdsCompaction = holdsUpkeep
        t.defersUpkeep = defersUpkeep
        tables[collection] = t
        return t
    }

    package func scan(_ collection: Key, prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
        guard let t = tables[collection] else { return [] }
        return try t.scan(prefix: prefix, after: after, limit: limit)
    }

    package func aggregate(_ collection: Key, prefix: Key, kind: ViewKind) throws(OptimistError) -> Double {
        try aggregateByScanning(collection, prefix: prefix, kind: kind)
    }

    /// Per collection, its indexes (in the order they were defined).
    @exclusivity(unchecked) private var indexes: [Key: [MemoryIndex]] = [:]

    package func defineIndex(_ collection: Key, _ field: FieldPath) throws(OptimistError) {
        if indexes[collection]?.contains(where: { $0.field == field }) == true { return }
        var entries = [MemoryIndex.Entry]()
        var after: Key?
        while true {
            let page = try scan(collection, prefix: "", after: after, limit: 4096)
            for (key, record) in page { entries.append(.init(sort: IndexKey.encode(field.value(in: record, key: key)), key: key)) }
            guard page.count == 4096, let last = page.last else { break }
            after = last.key
        }
        let order = MemoryIndex.Entry.Order()
        entries.sort { order.compareValues($0, $1) < 0 }
        let index = MemoryIndex(field: field)
        index.entries.load(sorted: entries)
        indexes[collection, default: []].append(index)
    }

    package func indexedFields(_ collection: Key) -> [FieldPath] { indexes[collection]?.map(\.field) ?? [] }

    package func indexedRecords(_ collection: Key, _ field: FieldPath, _ spans: [IndexBounds]) throws(OptimistError) -> [(key: Key, value: Record)]? {
        guard let index = indexes[collection]?.first(where: { $0.field == field }) else { return nil }
        var out = [(key: Key, value: Record)]()
        for span in spans {
            let lo = index.entries.lowerBound(.init(sort: span.lower, key: ""))
            let hi = span.upper.map { index.entries.lowerBound(.init(sort: $0, key: "")) } ?? index.entries.count
            guard lo < hi else { continue }
            for e in index.entries.elements(lo..<hi) {
                if let r = try uncachedRecord(collection, e.key) { out.append((e.key, r)) }
            }
        }
        return out
    }

    package func endCall() { cache.trim() }

    /// A pull round's staged changes: an in-memory store has nowhere else to keep them.
    @exclusivity(unchecked) private var staged: [Op] = []

    package func stagePull(_ changes: [Op]) { staged.append(contentsOf: changes) }

    package func stagedPull() throws(OptimistError) -> [Op] { staged }

    package func dropStagedPull() { staged = [] }

    package func collectionNames() throws(OptimistError) -> [Key] { Array(tables.keys) }

    package func sealAppend() -> UInt64 {
        appends &+= 1
        return appends
    }

    /// While set, writes leave compaction for ``prepareUpkeep()`` (a staged change moving its
    /// records in, a step at a time under the state lock, must keep each step short).
    @exclusivity(unchecked) package var holdsUpkeep = false {
        didSet { for t in tables.values { t.holdsCompaction = holdsUpkeep } }
    }

    /// The compactions and index merges the held-back writes made due, built here (outside
    /// the state lock: it only reads the tables, as readers do) and installed by the returned
    /// upkeep.
    package func prepareUpkeep() -> (any StorageUpkeep)? {
        upkeepDue = false
        var ready = [(Table, Table.Compacted)]()
        var rooms = [(Table, Table.Room)]()
        for t in tables.values {
            if let c = t.compacted() {
                ready.append((t, c))
            } else if defersUpkeep, let room = t.spareRoom() {
                rooms.append((t, room))
            }
        }
        let indexes = tables.values.compactMap { t in t.merged().map { (t, $0) } }
        return ready.isEmpty && indexes.isEmpty && rooms.isEmpty ? nil : Compactions(ready: ready, indexes: indexes, rooms: rooms)
    }

    /// See ``ConfirmedStorage/defersUpkeep``.
    @exclusivity(unchecked) package var defersUpkeep = false {
        didSet { for t in tables.values { t.defersUpkeep = defersUpkeep } }
    }

    /// See ``ConfirmedStorage/upkeepDue``: set by the write that made it due.
    @exclusivity(unchecked) package private(set) var upkeepDue = false

    package func prepareMoves(_ records: [RecordMove]) -> (any StagedMoves)? {
        guard !records.isEmpty else { return nil }
        var puts: [Key: [Key]] = [:]
        for r in records where r.value != nil { puts[r.collection, default: []].append(r.key) }
        var rooms: [(Key, Table?, Table.Room)] = []
        for (collection, keys) in puts {
            let table = tables[collection]
            if let room = (table ?? Table()).room(for: keys) { rooms.append((collection, table, room)) }
        }
        // The records' bytes back to back, as the arena keeps them (members unsorted).
        var bytes = [UInt8]()
        bytes.reserveCapacity(records.count * 64)
        var spans = [Range<Int>]()
        spans.reserveCapacity(records.count)
        for r in records {
            let start = bytes.count
            if let value = r.value { JSONWriter.appendObject(value, to: &bytes, sorted: false) }
            spans.append(start..<bytes.count)
        }
        return Moves(storage: self, records: records, bytes: bytes, spans: spans, rooms: rooms)
    }

    /// Arenas and slot indexes regrown, tables a staged change creates made with room, and the
    /// records' bytes: all built outside the lock.
    private final class Moves: StagedMoves {
        let storage: MemoryStorage
        let records: [RecordMove]
        let bytes: [UInt8]
        let spans: [Range<Int>]
        var rooms: [(Key, Table?, Table.Room)]

        init(storage: MemoryStorage, records: [RecordMove], bytes: [UInt8],
             spans: [Range<Int>], rooms: [(Key, Table?, Table.Room)]) {
            self.storage = storage
            self.records = records
            self.bytes = bytes
            self.spans = spans
            self.rooms = rooms
        }

        func installRoom() -> Any {
            let taken = rooms
            rooms = []
            return taken.map { (collection, table, room) -> Any in
                if let table { return table.install(room) }
                let fresh = storage.table(collection)
                return fresh.install(room)
            }
        }

        func move(_ index: Int) {
            let r = records[index]
            bytes.withUnsafeBytes { all in
                let encoded = r.value == nil ? nil : UnsafeRawBufferPointer(rebasing: all[spans[index]])
                storage.write(r.collection, r.key, r.value, encoded: encoded)
            }
        }
    }

    private struct Compactions: StorageUpkeep {
        let ready: [(Table, Table.Compacted)]
        let indexes: [(Table, SortedKeyIndex)]
        var rooms: [(Table, Table.Room)] = []
        func install() -> Any {
            (ready.map { $0.0.install($0.1) }, indexes.map { $0.0.install(index: $0.1) }, rooms.map { $0.0.install($0.1) })
        }
    }

    package func close() {
        tables = [:]
        indexes = [:]
        cache.removeAll()
    }

    package var cacheUsage: (entries: Int, bytes: Int) { (cache.count, cache.bytes) }
    package var cacheBudget: Int { cache.budget }

    /// Bytes the arenas hold (live and not yet compacted), for tests.
    package var arenaBytes: Int { tables.values.reduce(0) { $0 + $1.arena.count } }

    /// Bytes the arenas have room for, for tests.
    package var arenaCapacity: Int { tables.values.reduce(0) { $0 + $1.arena.capacity } }
}

extension MemoryStorage {
    /// One collection: the arena and its index.
    final class Table {
        /// Canonical JSON of every record, back to back; rewritten bytes stay until compaction.
        @exclusivity(unchecked) private(set) var arena: [UInt8] = []
        /// Each key's bytes in `arena`: offset in the high 40 bits, length in the low 24.
        @exclusivity(unchecked) private var slots: [Key: UInt64] = [:]
        /// Bytes in `arena` no slot points at any more.
        @exclusivity(unchecked) private var garbage = 0
        @exclusivity(unchecked) private var index = SortedKeyIndex()
        /// See ``MemoryStorage/holdsUpkeep``.
        @exclusivity(unchecked) var holdsCompaction = false
        /// See ``MemoryStorage/defersUpkeep``.
        @exclusivity(unchecked) var defersUpkeep = false

        /// Records up to 16 MiB - 1 fit a slot's length; a bigger one is kept in `big`.
        private static let lengthBits: UInt64 = 24
        private static let bigLength = (1 << 24) - 1
        @exclusivity(unchecked) private var big: [Key: [UInt8]] = [:]

        func record(_ key: Key) throws(OptimistError) -> Record? {
            guard let slot = slots[key] else { return nil }
            let length = Int(slot & ((1 << Self.lengthBits) - 1))
            if length == Self.bigLength { return try Self.parse(big[key] ?? [], key) }
            let offset = Int(slot >> Self.lengthBits)
            return try arena.withUnsafeBufferPointer { (all) throws(OptimistError) -> Record in
                try Self.parse(UnsafeBufferPointer(rebasing: all[offset..<offset + length]), key)
            }
        }

        private static func parse(_ bytes: [UInt8], _ key: Key) throws(OptimistError) -> Record {
            try bytes.withUnsafeBufferPointer { (b) throws(OptimistError) -> Record in try parse(b, key) }
        }

        private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ key: Key) throws(OptimistError) -> Record {
            do { return try JSONParser.parseObject(bytes) } catch {
                throw .internal("record \(key) in memory does not parse: \(error)")  // we wrote it: a bug
            }
        }

        /// Writes `value` (nil: removes the record); `encoded`, when given, is its bytes as
        /// the arena keeps them, written ahead (see ``MemoryStorage/prepareMoves(_:)``).
        func set(_ key: Key, _ value: Record?, encoded: UnsafeRawBufferPointer? = nil) {
            if let old = slots[key] {
                let length = Int(old & ((1 << Self.lengthBits) - 1))
                if length == Self.bigLength { big.removeValue(forKey: key) } else { garbage += length }
            }
            guard let value else {
                if slots.removeValue(forKey: key) != nil { index.noteRemoval() }
                compactIfWasteful()
                return
            }
            let offset = arena.count
            if let encoded {
                arena.append(contentsOf: encoded)
            } else {
                JSONWriter.appendObject(value, to: &arena, sorted: false)  // read back only here
            }
            var length = arena.count - offset
            if length >= Self.bigLength {
                big[key] = Array(arena[offset...])
                arena.removeSubrange(offset...)
                length = Self.bigLength
            }
            if slots.updateValue(UInt64(offset) << Self.lengthBits | UInt64(length), forKey: key) == nil {
                index.insert(key)
                // While upkeep is held (a staged change moving records in), the merge waits
                // for ``merged()``, built outside the lock; a scan meanwhile merges for itself.
                if index.needsMerge && !holdsCompaction && !defersUpkeep { index.prepare(contains: { slots[$0] != nil }) }
            }
            compactIfWasteful()
        }

        /// Rewrites the arena without dead bytes once they are more than half of it, so the
        /// arena stays within twice the live bytes whatever the rewrite pattern; the cost is
        /// O(live bytes), paid after at least as many dead bytes were written.
        private func compactIfWasteful() {
            guard !holdsCompaction, !defersUpkeep, let c = compacted() else { return }
            _ = install(c)
        }

        /// Whether ``MemoryStorage/prepareUpkeep()`` has work here: a compaction or a merge
        /// due, or the arena or the slots about to outgrow their room (see ``spareRoom()``).
        var upkeepDue: Bool { index.needsMerge || wasteful || arenaNearlyFull || slotsNearlyFull }

        /// More than half the arena is dead bytes, and enough of them to be worth a rewrite.
        private var wasteful: Bool { garbage > 1 << 16 && garbage * 2 > arena.count }

        /// The arena or the slots (of a table big enough for their copy to matter) within
        /// a sixteenth of their room: the next writes would regrow them, copying all they
        /// hold, inside the writer's state-lock hold.
        private var arenaNearlyFull: Bool { arena.count >= 1 << 16 && arena.count + arena.count / 16 >= arena.capacity }
        private var slotsNearlyFull: Bool { slots.count >= 4096 && slots.count + slots.count / 16 >= slots.capacity }

        /// Copies of the arena and slots with twice the room, for those nearly full, built
        /// outside the state lock (see ``room(for:)``); nil when neither is.
        func spareRoom() -> Room? {
            var room = Room()
            if arenaNearlyFull {
                var grown = [UInt8]()
                grown.reserveCapacity(arena.count * 2)
                grown.append(contentsOf: arena)
                room.arena = grown
            }
            if slotsNearlyFull {
                var grown = slots
                grown.reserveCapacity(slots.count * 2)
                room.slots = grown
            }
            return room.arena == nil && room.slots == nil ? nil : room
        }

        struct Compacted {
            var arena: [UInt8]
            var slots: [Key: UInt64]
        }

        /// The arena and slots without dead bytes, when those are more than half; built
        /// beside the live ones, which it only reads.
        func compacted() -> Compacted? {
            guard wasteful else { return nil }
            let live = arena.count - garbage
            var fresh = [UInt8]()
            // Room to rewrite every record once more before the arena must grow (a growth
            // copies it all).
            fresh.reserveCapacity(live * 2)
            var moved = [Key: UInt64](minimumCapacity: slots.count)
            for (key, slot) in slots {
                let length = Int(slot & ((1 << Self.lengthBits) - 1))
                if length == Self.bigLength {
                    moved[key] = slot
                    continue
                }
                let offset = Int(slot >> Self.lengthBits)
                let start = fresh.count
                fresh.append(contentsOf: arena[offset..<offset + length])
                moved[key] = UInt64(start) << Self.lengthBits | UInt64(length)
            }
            return Compacted(arena: fresh, slots: moved)
        }

        /// What ``room(for:)`` makes: a regrown arena, regrown slots, or both.
        struct Room {
            var arena: [UInt8]?
            var slots: [Key: UInt64]?
        }

        /// Copies of the arena and the slots with room for `keys` written once more (an
        /// estimate for the arena, from the average record so far), or nil when they have it.
        /// Built outside the state lock: it only reads, as readers do, and only writers (one
        /// at a time, the caller among them) change a table.
        func room(for keys: [Key]) -> Room? {
            let records = slots.count - big.count
            let average = records > 0 ? max(16, (arena.count - garbage) / records) : 128
            let needed = arena.count + keys.count * average + keys.count * average / 8
            var room = Room()
            if arena.capacity < needed {
                var grown = [UInt8]()
                grown.reserveCapacity(needed)
                grown.append(contentsOf: arena)
                room.arena = grown
            }
            var added = 0
            for k in keys where slots[k] == nil { added += 1 }
            if added > 0, slots.capacity < slots.count + added {
                var grown = slots
                grown.reserveCapacity(slots.count + added)
                room.slots = grown
            }
            return room.arena == nil && room.slots == nil ? nil : room
        }

        /// The sorted key index with the keys added since its last merge merged in, when
        /// enough wait (see ``SortedKeyIndex/needsMerge``); built outside the lock like a
        /// compaction, while upkeep is held (scans then leave the index alone: see ``scan``).
        func merged() -> SortedKeyIndex? {
            guard index.needsMerge else { return nil }
            var fresh = index
            fresh.prepare(contains: { slots[$0] != nil })
            return fresh
        }

        /// Puts a ``merged()`` index in place; returns the replaced one.
        func install(index fresh: SortedKeyIndex) -> SortedKeyIndex {
            let old = index
            index = fresh
            return old
        }

        /// Puts a ``Room`` in place (valid while nothing was written since it was made: the
        /// caller holds the writers' lock throughout); returns what it replaced.
        func install(_ room: consuming Room) -> Room {
            var old = Room()
            if let grown = room.arena.take() {
                old.arena = arena
                arena = grown
            }
            if let grown = room.slots.take() {
                old.slots = slots
                slots = grown
            }
            return old
        }

        /// Puts a compaction in place (valid while nothing was written since it was built);
        /// returns the replaced arena and slots, for the caller to free outside the lock.
        func install(_ c: Compacted) -> Compacted {
            let old = Compacted(arena: arena, slots: slots)
            arena = c.arena
            slots = c.slots
            garbage = 0
            return old
        }

        func scan(prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)] {
            // While upkeep is held, a staged change builds the merged index outside the state
            // lock from this one (``merged()``): a scan then merges a copy for itself and leaves
            // the index as it is, so nothing changes it under the builder.
            let index: SortedKeyIndex
            if holdsCompaction {
                var copy = self.index
                copy.prepare(contains: { slots[$0] != nil })
                index = copy
            } else {
                self.index.prepare(contains: { slots[$0] != nil })
                index = self.index
            }
            let keys = index.sorted
            var i = index.lowerBound(prefix)
            if let after, prefix < after { i = index.lowerBound(after) }
            var out = [(key: Key, value: Record)]()
            while i < keys.count, out.count < limit {
                let k = keys[i]
                i += 1
                guard k.hasBytePrefix(prefix) else { break }
                if let after, !(after < k) { continue }
                if let r = try record(k) { out.append((k, r)) }
            }
            return out
        }
    }
}

/// One ordered index of an in-memory store: every confirmed record's sort key on the field
/// (``IndexKey``) and key, in order, in chunks (``OrderedRows``: O(log n) to find, insert or
/// remove one).
final class MemoryIndex {
    struct Entry {
        var sort: [UInt8]
        var key: Key

        struct Order: RowOrdering {
            func compare(_ a: UnsafePointer<Entry>, _ b: UnsafePointer<Entry>) -> Int {
                let c = IndexKey.compare(a.pointee.sort, b.pointee.sort)
                return c != 0 ? c : compareBytes(a.pointee.key.string, b.pointee.key.string)
            }
        }
    }

    let field: FieldPath
    @exclusivity(unchecked) var entries = OrderedRows(Entry.Order())

    init(field: FieldPath) { self.field = field }

    /// The record at `key` went from `old` to `new` (nil: absent).
    func replace(_ key: Key, old: Record?, new: Record?) {
        let before = old.map { IndexKey.encode(field.value(in: $0, key: key)) }
        let after = new.map { IndexKey.encode(field.value(in: $0, key: key)) }
        if before == after { return }
        if let before { entries.remove(.init(sort: before, key: key)) }
        if let after { entries.insert(.init(sort: after, key: key)) }
    }
}
