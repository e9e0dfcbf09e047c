import OptimistModel
/// Where a store keeps its confirmed records `C`: the storage port.
///
/// The engine holds only what is pending in memory (each touched key's chain and visible
/// value); every other read of a record goes through this port. Two implementations:
/// ``MemoryStorage`` (an in-memory store: records as canonical JSON bytes) and the SQLite
/// one in the persistence module (a store file: records stay in the file).
///
/// Both put a bounded cache of parsed records (``RecordCache``) in front of their bytes. The
/// cache is trimmed to its budget only at the end of a store call (``endCall()``), so a
/// record read once during a call stays readable, from memory, until the call ends: the
/// engine reads everything a call needs first (``Engine/prefetch(_:)``), and the rest of the
/// call cannot fail on a read.
package protocol ConfirmedStorage: AnyObject {
    /// `C[collection][key]`, nil when absent.
    ///
    /// - Throws: `.io` when the disk fails; `.corrupt` when the stored record is damaged.
    func record(_ collection: Key, _ key: Key) throws(OptimistError) -> Record?

    /// ``record(_:_:)`` without keeping the record in the cache: for a caller that keeps what
    /// it read itself (a reopen folding pending mutations holds each touched record in its
    /// overlay), so the reads neither fill nor churn the cache.
    func uncachedRecord(_ collection: Key, _ key: Key) throws(OptimistError) -> Record?

    /// ``uncachedRecord(_:_:)`` for many keys of one collection at once: the present ones,
    /// by key. A store file answers them with one query per few thousand keys, where a
    /// statement per key would cost a read transaction each.
    func uncachedRecords(_ collection: Key, _ keys: [Key]) throws(OptimistError) -> [Key: Record]

    /// `C[collection][key] := value` (nil deletes). Never fails: a file-backed storage keeps
    /// the value in memory until its writer has written it, that is until the journal append
    /// that carries it (the number ``sealAppend()`` gives next) is committed.
    func setRecord(_ collection: Key, _ key: Key, _ value: Record?)

    /// The number of the journal append that carries what the change wrote since the last
    /// call (1, 2, ...), after which the next append's number begins. The store calls it once
    /// per append, under the writers' lock, and hands the number to the sink with the entries:
    /// the storage names each append, so it knows which of its writer's commits makes a record
    /// durable without reading the sink's own counts.
    func sealAppend() -> UInt64

    /// A staged batch handed its journal to the sink at its publish, as the append just
    /// sealed, and now moves its records in: until ``releaseAppendForMoves()``, the records
    /// set belong to that append (nothing else sets one meanwhile: see ``Store``'s locking),
    /// not to the next, which may be long in coming.
    func holdAppendForMoves()

    /// The staged batch's records are all in: records set belong to the next append again.
    func releaseAppendForMoves()

    /// Confirmed records of `collection` whose key starts with `prefix` and sorts after
    /// `after` (nil: from the start), in byte order, at most `limit` (> 0).
    func scan(_ collection: Key, prefix: Key, after: Key?, limit: Int) throws(OptimistError) -> [(key: Key, value: Record)]

    /// A view's value over the confirmed records of `collection` whose key starts with
    /// `prefix`, computed where the records are (one query on a store file).
    func aggregate(_ collection: Key, prefix: Key, kind: ViewKind) throws(OptimistError) -> Double

    // Ordered secondary indexes (see ``IndexKey``): what a live query's first evaluation
    // reads instead of its collection, when one fits its `where`.

    /// Defines an ordered index on `field` (not `$key`) over `collection`'s confirmed records,
    /// built from the records there now and kept up to date on every change after; nothing
    /// when it exists. A store file keeps it in the file, so a reopen does not build it again.
    ///
    /// - Throws: `.io` when the disk fails; `.readOnly` on a read-only store file.
    func defineIndex(_ collection: Key, _ field: FieldPath) throws(OptimistError)

    /// The fields `collection` has an index on.
    func indexedFields(_ collection: Key) -> [FieldPath]

    /// Confirmed records of `collection` whose sort key on `field` lies in one of `spans`
    /// (``IndexBounds/normalized(_:)``), each once, in no promised order, read through the
    /// index without loading the rest of the collection (nor keeping them in the cache); nil
    /// when `field` has no index.
    func indexedRecords(_ collection: Key, _ field: FieldPath, _ spans: [IndexBounds]) throws(OptimistError) -> [(key: Key, value: Record)]?

    /// The store call in progress ended: the cache is trimmed to its budget.
    func endCall()

    /// The store is closing: drop the cache and release what refers to the file (a store
    /// file's prepared statements, which would keep its connection open).
    func close()

    /// What the cache holds, for tests and the CLI: entries and estimated bytes.
    var cacheUsage: (entries: Int, bytes: Int) { get }

    /// The cache's budget in estimated bytes: the `cacheBytes` the store was opened with.
    var cacheBudget: Int { get }

    /// While set, writes leave their upkeep (an in-memory store's compaction) for
    /// ``prepareUpkeep()``: a staged change sets it while it moves records in.
    var holdsUpkeep: Bool { get set }

    /// The upkeep held back, built outside the state lock (it may only read the storage,
    /// as readers do); nil when none is due.
    func prepareUpkeep() -> (any StorageUpkeep)?

    /// Set once by the store that owns the storage: ordinary writes leave their upkeep
    /// (an in-memory store's compactions, index merges and regrown tables, each O(records))
    /// for ``prepareUpkeep()``, which the store runs after the call, outside the state lock,
    /// when ``upkeepDue`` says so. Unset, writes do it inline (a storage used on its own).
    var defersUpkeep: Bool { get set }

    /// Whether a write since the last ``prepareUpkeep()`` made upkeep due (see
    /// ``defersUpkeep``); read by the writer after each change, so it must be cheap.
    var upkeepDue: Bool { get }

    /// What a staged change prepares outside the state lock for the records it is about to
    /// move in: room (growing an arena or a hash index copies everything it holds, which
    /// inside one of the moves' holds would make a reader wait milliseconds) and, for an
    /// in-memory store, the records' bytes (the encoding is most of a move). Nil when there
    /// is nothing to prepare: the moves then go through ``setRecord(_:_:_:)``.
    func prepareMoves(_ records: [RecordMove]) -> (any StagedMoves)?

    // A pull round's staged changes (see ``PullRound``), kept beside the records until the
    // round ends.

    /// Keeps one staged page's changes. An in-memory store keeps them in memory; a store file
    /// does nothing here: the journal entry that stages the page carries them to its writer,
    /// which writes them to the file's `pull_stage` table.
    func stagePull(_ changes: [Op])

    /// Every change staged since the round began, in order. A store file reads them from its
    /// file, so its caller flushes the journal first.
    func stagedPull() throws(OptimistError) -> [Op]

    /// The round ended: its staged changes go (a store file's with the journal entry that
    /// ends the round).
    func dropStagedPull()

    /// Every collection that may have confirmed records (a reset of the confirmed state
    /// walks them).
    func collectionNames() throws(OptimistError) -> [Key]

    /// Whether a staged round can end in the storage itself (``JournalEntry/pullRoundApplied(cursor:reset:)``):
    /// a store file, whose writer applies the staged pages a page at a time, so the round's
    /// end holds no more of it in memory than a page.
    var appliesStagedRounds: Bool { get }

    /// The records changed under the storage (a round applied in the file): every record it
    /// keeps in memory (its cache, and what it held for its writer, which wrote it already)
    /// goes, to be read again.
    func forgetConfirmed()
}

/// A record a staged change moves into the storage: its collection, key and new confirmed value (nil: deleted).
package struct RecordMove: Sendable {
    package var collection: Key
    package var key: Key
    package var value: Record?

    package init(collection: Key, key: Key, value: Record?) {
        self.collection = collection
        self.key = key
        self.value = value
    }
}

/// A staged change's moves, prepared outside the state lock (see
/// ``ConfirmedStorage/prepareMoves(_:)``); every call below is made under it, while the
/// storage holds its upkeep. A class, so that installing can move buffers out of it: a second
/// reference left behind would make the next write copy them (copy on write).
package protocol StagedMoves: AnyObject {
    /// Puts the room in place; returns what it replaced, for the caller to free outside the lock.
    func installRoom() -> Any
    /// Moves record `index` of those prepared into the storage, as ``ConfirmedStorage/setRecord(_:_:_:)`` does.
    func move(_ index: Int)
}

/// Upkeep built outside the state lock, put in place under it.
package protocol StorageUpkeep {
    /// Puts it in place; returns what it replaced, for the caller to free outside the lock.
    func install() -> Any
}

/// The cache budget when the opener names none: 32 MiB of parsed records (a phone app's
/// screenful of records many times over, and small beside the app itself).
public let defaultCacheBytes = 32 << 20

/// The largest budget taken as given; a larger one is clamped to it (a budget is a bound
/// on memory, and no device has 256 TiB).
public let maximumCacheBytes = 1 << 48

extension ConfirmedStorage {
    /// No upkeep by default (a store file's writer thread does its own).
    package var holdsUpkeep: Bool {
        get { false }
        set {}
    }

    package func prepareUpkeep() -> (any StorageUpkeep)? { nil }

    package var defersUpkeep: Bool {
        get { false }
        set {}
    }

    package var upkeepDue: Bool { false }

    package func holdAppendForMoves() {}

    package func releaseAppendForMoves() {}

    package func prepareMoves(_ records: [RecordMove]) -> (any StagedMoves)? { nil }

    package var appliesStagedRounds: Bool { false }

    package func forgetConfirmed() {}

    /// One ``uncachedRecord(_:_:)`` per key: enough where a read is a memory lookup.
    package func uncachedRecords(_ collection: Key, _ keys: [Key]) throws(OptimistError) -> [Key: Record] {
        var out = [Key: Record](minimumCapacity: keys.count)
        for k in keys { if let r = try uncachedRecord(collection, k) { out[k] = r } }
        return out
    }

    /// A view's value computed by scanning the records a page at a time: the in-memory
    /// storage's aggregate, and the file's for a field name SQL cannot spell.
    package func aggregateByScanning(_ collection: Key, prefix: Key, kind: ViewKind) throws(OptimistError) -> Double {
        var total = 0.0
        var after: Key?
        while true {
            let page = try scan(collection, prefix: prefix, after: after, limit: 4096)
            for (_, r) in page { total += kind.contribution(r) }
            guard page.count == 4096, let last = page.last else { return total }
            after = last.key
        }
    }
}

extension ViewKind {
    /// What one record adds to a view of this kind.
    package func contribution(_ record: Record?) -> Double {
        guard let record else { return 0 }
        switch self {
        case .count: return 1
        case .sum(let field): return record[field]?.number ?? 0
        }
    }
}
