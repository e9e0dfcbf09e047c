import OptimistCore
import OptimistModel

/// Journal entries folded into the net change one transaction writes (group commit): the last
/// write of a record or of a mutation within the batch wins, a mutation that ended within the
/// batch is written only as ended, loaded ranges keep their order.
///
/// Entries are folded in the order the store produced them, so a batch always holds the
/// state after some store call: a crash loses whole calls, never part of one.
struct JournalBatch {
    /// `nil` value: the confirmed record was deleted.
    var records: [RecordAddress: Record?] = [:]
    /// Keyed by ``MutationKey``, whose hash is a cheap mix: a `UInt64`'s default SipHash cost
    /// the writer on every insert and lookup (an insert here, a lookup to write it).
    var mutations: [MutationKey: MutationRecord] = [:]
    /// Ended mutations in the order they ended (a mutation ends once). Taps end ids in
    /// increasing order, so ``endedInOrder`` usually stays true and the writer groups them by
    /// chunk without sorting.
    private(set) var ended: [(id: MutationID, status: MutationStatus)] = []
    private(set) var endedInOrder = true
    var loaded: [(collection: Key, range: LoadedRange)] = []
    /// The last sync cursor recorded in the batch, when one was (`.some(nil)`: cleared).
    var syncCursor: String??
    /// Views by name, the last definition and confirmed value in the batch.
    var views: [String: ViewDefinition] = [:]
    /// Staged pull pages to add (see ``PullRound``), each page's changes, in order; written
    /// after the staged pages already in the file go, when ``clearsStage`` says so.
    var stagedPages: [[Op]] = []
    /// A pull round ended in the batch: the file's staged pages go.
    var clearsStage = false
    /// The staged round's last progress in the batch (`.some(nil)`: no round staged).
    var pullRound: PullRound??
    /// The staged round ends in this batch's transaction, applied by the writer from the
    /// staged pages (see ``JournalEntry/pullRoundApplied(cursor:reset:)``): whether it began
    /// with a reset.
    var appliesRound: (reset: Bool, Void)?
    /// The highest mutation id seen, so the file's next id never falls behind an id handed out.
    var maxID: MutationID = 0

    var isEmpty: Bool {
        records.isEmpty && mutations.isEmpty && ended.isEmpty && loaded.isEmpty && maxID == 0 && syncCursor == nil && views.isEmpty
            && stagedPages.isEmpty && !clearsStage && pullRound == nil && appliesRound == nil
    }

    mutating func fold(_ entries: some Sequence<JournalEntry>) {
        for e in entries {
            switch e {
            case .confirmed(let c, let k, let v):
                records[RecordAddress(collection: c, key: k)] = .some(v)
            case .mutation(let m):
                mutations[MutationKey(m.id)] = m
                maxID = max(maxID, m.id)
            case .ended(let id, let status):
                mutations.removeValue(forKey: MutationKey(id))
                if let last = ended.last, id <= last.id { endedInOrder = false }
                ended.append((id, status))
                maxID = max(maxID, id)
            case .loaded(let c, let from, let to, let at):
                loaded.append((c, LoadedRange(from: from, to: to, at: at)))
            case .syncCursor(let cursor):
                syncCursor = .some(cursor)
            case .view(let v):
                views[v.name] = v
            case .pullStaged(let changes, let round):
                if !changes.isEmpty { stagedPages.append(changes) }
                pullRound = .some(round)
            case .pullRoundApplied(let cursor, let reset):
                // The staged pages stay: the writer applies them, then empties the staging.
                appliesRound = (reset, ())
                syncCursor = .some(cursor)
                pullRound = .some(nil)
            case .pullRoundEnded:
                stagedPages.removeAll()
                clearsStage = true
                pullRound = .some(nil)
            case .block(let entries):
                fold(entries)
            }
        }
    }
}

extension JournalBatch {
    /// The positions of ``records`` in (collection, key) byte order, for the writer's inserts.
    ///
    /// Sorting the records themselves (two keys and a value each) moved them with a retain and
    /// release per string at every step: a large share of the writer's time on a big server
    /// batch. Here a sort item is a collection's rank and the key's first 16 bytes as two
    /// integers (``Key/orderingHead``), which decide almost every comparison; only keys that
    /// share their first 16 bytes are compared whole.
    func recordsInKeyOrder() -> [Dictionary<RecordAddress, Record?>.Index] {
        struct Item {
            var rank: Int
            var head: (UInt64, UInt64)
            var index: Dictionary<RecordAddress, Record?>.Index
        }
        // The collections ranked once, in byte order. A batch usually names one, so the last
        // collection seen answers almost every record without a lookup.
        var names: Set<Key> = []
        var seen: Key?
        for a in records.keys where a.collection != seen {
            names.insert(a.collection)
            seen = a.collection
        }
        var ranks: [Key: Int] = [:]
        for (rank, name) in names.sorted().enumerated() { ranks[name] = rank }
        var items: [Item] = []
        items.reserveCapacity(records.count)
        var i = records.startIndex
        var last: (name: Key?, rank: Int) = (nil, 0)
        while i != records.endIndex {
            let a = records.keys[i]
            if a.collection != last.name { last = (a.collection, ranks[a.collection].unsafelyUnwrapped) }
            items.append(Item(rank: last.rank, head: a.key.orderingHead, index: i))
            records.formIndex(after: &i)
        }
        items.sort { x, y in
            if x.rank != y.rank { return x.rank < y.rank }
            if x.head.0 != y.head.0 { return x.head.0 < y.head.0 }
            if x.head.1 != y.head.1 { return x.head.1 < y.head.1 }
            return records.keys[x.index].key < records.keys[y.index].key
        }
        return items.map(\.index)
    }
}
