import OptimistModel
/// One collection's pending overlay: for each key a live mutation touches, the chain of those
/// mutations in order and the key's visible value `V` (nil: deleted), recomputed from the chain
/// and the confirmed record alone. Every other key's `V` is its confirmed record, which lives in
/// the store's ``ConfirmedStorage``: memory holds what is pending, not the collection.
final class CollectionState {
    let name: Key
    @exclusivity(unchecked) var chains: [Key: PendingChain] = [:]
    /// `V` of the keys in `chains`, plus keys whose chain just ended until they are recomputed.
    @exclusivity(unchecked) var overlay: [Key: Record?] = [:]
    /// The overlay's keys in byte order, for scans.
    @exclusivity(unchecked) var index = SortedKeyIndex()
    @exclusivity(unchecked) var views: [ViewState] = []
    /// The live queries on this collection, in the order they were opened.
    @exclusivity(unchecked) var queries: [LiveQueryState] = []
    /// Listed in the engine's views touched by the call in progress (see ``Engine/publishViews()``).
    @exclusivity(unchecked) var viewsTouched = false
    /// A staged batch between its plan and its publish writes this collection: taps note the
    /// keys they touch in it (``Engine/stagingTouched``).
    @exclusivity(unchecked) var staged = false

    init(name: Key) { self.name = name }

    /// Calls `body` with each view, not retained: `views` keeps them, and no `body` changes
    /// it. (`for v in views` retained the array and each view, on every tap's view update
    /// and publish.)
    @inline(__always) func forEachView(_ body: (ViewState) -> Void) {
        for i in views.indices {
            unowned(unsafe) let v = views[i]
            body(v)
        }
    }
}

/// A pending mutation's place in the outbox: by queue position, where a retried mutation
/// (whose position is the next id at the time of its retry) comes before the fresh mutation
/// that takes that id, then by id.
struct DueEntry: Comparable {
    var position: UInt64
    var fresh: Bool
    var id: MutationID

    init(_ r: MutationRecord) { self.init(id: r.id, queuePosition: r.queuePosition) }

    init(id: MutationID, queuePosition: UInt64) {
        position = queuePosition
        fresh = queuePosition == id
        self.id = id
    }

    static func < (a: DueEntry, b: DueEntry) -> Bool {
        if a.position != b.position { return a.position < b.position }
        if a.fresh != b.fresh { return !a.fresh }
        return a.id < b.id
    }
}

/// A live mutation and the records it touches (each once, in first-touch order).
final class LiveMutation {
    @exclusivity(unchecked) var record: MutationRecord
    let touched: TouchedRecords

    /// `record` is taken, not copied (a copy retains its ops and strings and releases them).
    init(record: consuming MutationRecord) {
        touched = TouchedRecords(record.ops)
        self.record = record
    }
}

/// The records a mutation's ops touch, each once, in first-touch order. Most mutations have
/// one op: their one address is read from the op, so a live mutation costs no array.
struct TouchedRecords: RandomAccessCollection {
    private let ops: [Op]
    /// For two ops or more (nil for one).
    private let many: [RecordAddress]?

    init(_ ops: [Op]) {
        self.ops = ops
        guard ops.count > 1 else { many = nil; return }
        var seen = Set<RecordAddress>()
        var touched = [RecordAddress]()
        for op in ops {
            let a = RecordAddress(collection: op.collection, key: op.key)
            if seen.insert(a).inserted { touched.append(a) }
        }
        many = touched
    }

    var startIndex: Int { 0 }
    var endIndex: Int { many?.count ?? ops.count }
    subscript(i: Int) -> RecordAddress {
        if let many { return many[i] }
        return RecordAddress(collection: ops[i].collection, key: ops[i].key)
    }
}

struct Subscription {
    let collection: Key?
    let prefix: Key?
    let listener: @Sendable ([Change]) -> Void

    func wants(_ c: Change) -> Bool {
        if let collection, collection != c.collection { return false }
        if let prefix, !c.key.hasBytePrefix(prefix) { return false }
        return true
    }
}

/// Listener calls to make once the lock is released.
typealias Delivery = [(listener: @Sendable ([Change]) -> Void, changes: [Change])]

/// The store's state and rules, single-threaded; ``Store`` adds the lock, the listeners'
/// delivery and the persistence hand-off.
///
/// Its stored properties, and those of the other classes a tap, a commit or a get goes through
/// (the collections, the live mutations, the views, the read cache, both storages, the file's
/// writer), are `@exclusivity(unchecked)`: the runtime does not check each access against
/// overlapping ones. Every access is already ordered by the store's locks, and the checks cost
/// a tap about 4,000 instructions and a commit about 6,700 (`bash Benchmarks/callgrind.sh` on a
/// library built with `-DOPTIMIST_EXCLUSIVITY_CHECKS=ON`, as an app's Swift package build is;
/// BENCHMARKS.md, "Exclusivity checks"). The C library's build leaves them all out by a flag,
/// which a package added by URL may not carry; this keeps the Swift API as fast.
final class Engine {
    /// The confirmed records `C`.
    let storage: any ConfirmedStorage
    @exclusivity(unchecked) var collections: [Key: CollectionState] = [:]
    @exclusivity(unchecked) var live = LiveTable()
    /// `pending` mutations in send order (queue position, then id): the outbox's order.
    @exclusivity(unchecked) var due = DueQueue()
    @exclusivity(unchecked) var dedupe: [String: MutationID] = [:]
    @exclusivity(unchecked) var ended = EndedSet()
    /// The last ended mutations' records, for `mutation(id)` after the end.
    @exclusivity(unchecked) var recentlyEnded = RecentlyEnded()
    @exclusivity(unchecked) var nextID: MutationID = 1
    let clientID: String
    @exclusivity(unchecked) var retryPolicy = RetryPolicy()
    let jitterSeed: UInt64
    @exclusivity(unchecked) var freshness: [Key: Freshness] = [:]
    /// By name; a `Key` so that a read hashes the name's bytes once, cheaply.
    @exclusivity(unchecked) var views: [Key: ViewState] = [:]
    @exclusivity(unchecked) var subscriptions: [UInt64: Subscription] = [:]
    @exclusivity(unchecked) var nextSubscription: UInt64 = 1
    /// Open live queries by id.
    @exclusivity(unchecked) var queries: [UInt64: LiveQueryState] = [:]
    @exclusivity(unchecked) var nextQuery: UInt64 = 1
    /// Queries the call in progress changed (see ``takeDelivery()``).
    @exclusivity(unchecked) var queriesTouched: [LiveQueryState] = []

    /// Whether changes are noted for someone: a listener or a live query (which follow the
    /// records a call changed, and only those).
    @inline(__always) var tracksChanges: Bool { !subscriptions.isEmpty || !queries.isEmpty }
    @exclusivity(unchecked) var closed = false
    /// Opened read-only (a reader's copy of a store file): every change is refused.
    @exclusivity(unchecked) var readOnly = false
    /// The sync running on this store, if any.
    @exclusivity(unchecked) var attachment: (any StoreAttachment)?

    /// Entries for the persistence layer; nil for an in-memory store. Written and read by
    /// writers alone (readers never journal), so a change hands it over after its state-lock
    /// hold, under the writers' lock (see `Store.change`).
    @exclusivity(unchecked) var journal: [JournalEntry]?

    /// The sync's pull cursor (opaque, from the server); persisted with the store.
    @exclusivity(unchecked) var syncCursor: String?

    /// The pull round being staged (pages with `more: true` not applied yet), if any; see
    /// ``PullRound``. Persisted with the store, with its staged changes.
    @exclusivity(unchecked) var pullRound: PullRound?

    /// A big server change's records, published over the storage while its writer moves them
    /// in (see ``ConfirmedLayer``); nil at all other times.
    @exclusivity(unchecked) var layer: ConfirmedLayer?

    /// A storage read that failed after the call's prefetch (see ``visible(_:_:)``).
    @exclusivity(unchecked) var storageFault: OptimistError?

    /// The store's visible records for gets without the state lock: every change of a
    /// visible value drops its entry (see ``ReadCache``). Nil for an engine no store owns yet
    /// (a restore folds before its store exists; nobody reads it meanwhile).
    var readCache: ReadCache? {
        didSet { readCacheRef = readCache.map { Unmanaged.passUnretained($0) } }
    }
    /// ``readCache``, unretained, for ``dropCached(_:_:)``: through the optional property,
    /// every invalidation retained and released the cache (the engine keeps it alive).
    @exclusivity(unchecked) private var readCacheRef: Unmanaged<ReadCache>?

    /// The record's visible value changes: its read-cache entry goes (see ``ReadCache``).
    @inline(__always) private func dropCached(_ c: CollectionState, _ key: Key) {
        readCacheRef?._withUnsafeGuaranteedRef { $0.invalidate(c.name, key) }
    }

    /// The store's views by name for reads without the state lock (see ``ViewDirectory``);
    /// nil as ``readCache`` is.
    @exclusivity(unchecked) var viewDirectory: ViewDirectory?

    /// Collections whose views' values the call in progress changed: their views are
    /// published at the call's end (``publishViews()``).
    @exclusivity(unchecked) private var viewsTouched: [CollectionState] = []

    /// The cause of the changes being made: set by ``Store`` for each call, and switched by
    /// steps that make another kind of change within one call (a pull's outcomes).
    @exclusivity(unchecked) var cause: ChangeCause = .mutate

    // Change tracking for the call in progress: each touched record's value and status before
    // the call, the cause of its first change and whether it is reported even when unchanged
    // (a mutation's status changed under it), in first-touch order.
    @exclusivity(unchecked) var before: [RecordAddress: Before] = [:]
    @exclusivity(unchecked) var touchOrder: [RecordAddress] = []

    /// While a staged batch is between its plan and its publish: the records of its
    /// collections that the taps made meanwhile touched, for its publish to settle again (see
    /// `Engine+Staging.swift`).
    @exclusivity(unchecked) var stagingTouched: [RecordAddress] = []

    /// A staged batch runs, from its plan to its end: only taps may change the engine
    /// between its steps (see ``Store/change(_:_:)``).
    @exclusivity(unchecked) var stagingActive = false

    struct Before {
        var value: Record?
        var status: RecordStatus
        var cause: ChangeCause
        var forced: Bool
    }

    /// Views whose confirmed value changed in the call in progress: written to the journal
    /// once, at the call's end (``logViews()``), however many records the call confirmed.
    @exclusivity(unchecked) var changedViews: [ViewState] = []

    init(clientID: String, journaling: Bool, storage: any ConfirmedStorage) {
        self.clientID = clientID
        self.storage = storage
        self.journal = journaling ? [] : nil
        var g = SystemRandomNumberGenerator()
        jitterSeed = g.next()
    }

    func collection(_ name: Key) -> CollectionState {
        // Most calls name the collection the last one did (an app's taps go to one): compared
        // by the key's cached hash and bits, cheaper than a dictionary lookup. Collections are
        // never removed, so the one remembered stays right.
        if let last = lastCollection, last.name == name { return last }
        let c: CollectionState
        if let known = collections[name] {
            c = known
        } else {
            c = CollectionState(name: name)
            collections[name] = c
        }
        lastCollection = c
        return c
    }

    /// The collection ``collection(_:)`` returned last.
    @exclusivity(unchecked) private var lastCollection: CollectionState?

    @inline(__always) func log(_ e: @autoclosure () -> JournalEntry) {
        if journal != nil { journal!.append(e()) }
    }

    /// The call's journal entries, handed over (nil when none or in memory).
    func takeJournal() -> [JournalEntry]? {
        guard let j = journal, !j.isEmpty else { return nil }
        journal!.removeAll(keepingCapacity: true)
        return j
    }

    // MARK: Change tracking

    /// Remembers a record's state before it changes (only when someone listens).
    @inline(__always) func noteTouch(_ c: CollectionState, _ key: Key) {
        guard tracksChanges else { return }
        let a = RecordAddress(collection: c.name, key: key)
        if before[a] == nil {
            before[a] = Before(value: visible(c, key), status: recordStatus(c, key), cause: cause, forced: false)
            touchOrder.append(a)
        }
    }

    /// Notes that `m`'s status changes: its records are reported with `cause` even when their
    /// value and status stay the same (a transient failure, a retry, a send), so a UI hears of
    /// every status change.
    func noteStatusChange(_ m: LiveMutation, _ cause: ChangeCause) {
        guard tracksChanges else { return }
        for a in m.touched {
            let c = collection(a.collection)
            if var b = before[a] {
                b.forced = true
                before[a] = b
            } else {
                before[a] = Before(value: visible(c, a.key), status: recordStatus(c, a.key), cause: cause, forced: true)
                touchOrder.append(a)
            }
        }
    }

    /// `failed` when a kept failure touches the record, `pending` when another live mutation
    /// does, else `confirmed`.
    func recordStatus(_ c: CollectionState, _ key: Key) -> RecordStatus {
        guard let chain = c.chains[key] else { return .confirmed }
        for id in chain where live[MutationKey(id)]?.record.status == .failed { return .failed }
        return .pending
    }

    /// Drops what was noted for listeners (a staged change that failed before its publish).
    func forgetTouches() {
        before.removeAll(keepingCapacity: true)
        touchOrder.clearKeepingCapacity()
    }

    /// The listener calls owed for the changes since the last call.
    func takeDelivery() -> Delivery {
        guard !touchOrder.isEmpty else { return [] }
        var changes = [Change]()
        for a in touchOrder {
            let old = before[a]!
            let c = collections[a.collection]!
            let value = visible(c, a.key)
            let status = recordStatus(c, a.key)
            let valueChanged = value != old.value
            let differs = valueChanged || status != old.status
            if old.forced || differs {
                changes.append(Change(collection: a.collection, key: a.key, value: value, status: status, cause: old.cause))
            }
            if differs && !c.queries.isEmpty {
                follow(c, a.key, value: value, status: status, old: old, valueChanged: valueChanged)
            }
        }
        before.removeAll(keepingCapacity: true)
        touchOrder.clearKeepingCapacity()
        var delivery = Delivery()
        if !changes.isEmpty {
            for (_, s) in subscriptions.sorted(by: { $0.key < $1.key }) {
                let mine = changes.filter(s.wants)
                if !mine.isEmpty { delivery.append((s.listener, mine)) }
            }
        }
        if !queriesTouched.isEmpty { takeQueryDeltas(into: &delivery) }
        return delivery
    }

    // MARK: Reading records

    /// `V[key]`: the overlay's value when a mutation touches the key, else the confirmed record.
    /// For a key read earlier in the call (see ``prefetch(_:)``); a read that fails anyway
    /// (the disk, between a prefetch and its use) counts as absent and is kept in
    /// ``storageFault``, which the store reports from the call.
    @inline(__always) func visible(_ c: CollectionState, _ key: Key) -> Record? {
        if let i = c.overlay.index(forKey: key) { return c.overlay.values[i] }
        return confirmedRecord(c.name, key)
    }

    /// The same, for the first read of a key in a call: a storage failure is thrown.
    @inline(__always) func readVisible(_ c: CollectionState, _ key: Key) throws(OptimistError) -> Record? {
        if let i = c.overlay.index(forKey: key) { return c.overlay.values[i] }
        return try stored(c.name, key)
    }

    /// `C[key]` (see ``visible(_:_:)`` for failures).
    func confirmedRecord(_ collection: Key, _ key: Key) -> Record? {
        do { return try stored(collection, key) } catch {
            if storageFault == nil { storageFault = error }
            return nil
        }
    }

    /// Reads the confirmed records a call will need before the call changes anything, so a
    /// disk failure fails the call with nothing changed; the storage keeps them in memory
    /// until the call ends.
    func prefetch<S: Sequence>(_ addresses: S) throws(OptimistError) where S.Element == RecordAddress {
        for a in addresses { _ = try stored(a.collection, a.key) }
    }

    func prefetch(_ ops: [Op]) throws(OptimistError) {
        for op in ops { _ = try stored(op.collection, op.key) }
    }

    // MARK: Visible state

    /// Sets `V[key]` (`old`: its value until now): views follow it; the overlay holds it while
    /// a chain touches the key, and lets it go (V falls back to C) once none does. A restore
    /// passes `mergingIndex: false` and merges each key index once at the end.
    ///
    /// `chained`: whether a chain touches the key, when the caller knows (a mutation that
    /// just appended to the key's chain): spares a lookup of the chain.
    ///
    /// `at`: the key's place in the overlay, when the caller looked it up and nothing changed
    /// the overlay since (a tap's commit): spares the overlay a second lookup.
    func setVisible(_ c: CollectionState, _ key: Key, _ new: Record?, old: Record?, mergingIndex: Bool = true,
                    chained known: Bool? = nil, at overlaid: [Key: Record?].Index? = nil) {
        // A refold that finds the value it had (a commit of the key's only mutation: the
        // confirmed record is the op's own value, as the overlay was) changes neither the
        // views nor what a cached get returns. The entry still goes while a chain remains: a
        // staged batch's refill puts entries back with the batch's confirmed values, right
        // only for keys no pending mutation overlays (see `ReadCache.refill`).
        let chained = known ?? (c.chains[key] != nil)
        let same = Record.sameStorage(new, old)
        if !same, !c.views.isEmpty {
            c.forEachView { $0.update(key: key, old: old, new: new) }
            noteViewsTouched(c)
        }
        if !same || chained { dropCached(c, key) }
        if let i = overlaid {
            if chained {
                c.overlay.values[i] = new
            } else {
                c.overlay.remove(at: i)
                c.index.noteRemoval()
            }
        } else if chained {
            if c.overlay.updateValue(new, forKey: key) == nil {
                c.index.insert(key)
                if mergingIndex && c.index.needsMerge { c.index.prepare(contains: { c.overlay[$0] != nil }) }
            }
        } else if c.overlay.removeValue(forKey: key) != nil {
            c.index.noteRemoval()
        }
    }

    /// `V[key] = fold(chain[key], C[key])`, skipping ops that no longer apply.
    func recompute(_ c: CollectionState, _ key: Key) {
        recompute(c, key, overlaid: c.overlay.index(forKey: key)) { confirmedRecord(c.name, key) }
    }

    /// The same, with `C[key]` known to the caller (it just confirmed it), and the key's place
    /// in the overlay (`overlaid`: nil when not overlaid), which nothing changed since the
    /// caller looked it up.
    func recompute(_ c: CollectionState, _ key: Key, confirmed known: Record?, overlaid: [Key: Record?].Index?) {
        recompute(c, key, overlaid: overlaid) { known }
    }

    @inline(__always) private func recompute(_ c: CollectionState, _ key: Key, overlaid: [Key: Record?].Index?,
                                             reading read: () -> Record?) {
        guard let chain = c.chains[key] else {
            // No chain: V is C (the overlay, if any, goes).
            if let i = overlaid { setVisible(c, key, read(), old: c.overlay.values[i], chained: false, at: i) }
            return
        }
        // The ops before the chain's last put or delete of the key do not show: the fold starts
        // there, and needs no confirmed record (a tap's commit refolded every later tap's put,
        // 20 of them on the write-path bench, and read its record for nothing).
        let start = lastWhole(chain, c, key)
        let confirmed: Record? = start != nil && overlaid != nil ? nil : read()
        let old = overlaid.map { c.overlay.values[$0] } ?? confirmed
        var v = start == nil ? confirmed : nil
        for position in (start ?? 0)..<chain.count {
            guard let m = live[MutationKey(chain[position])] else { continue }
            for i in m.record.ops.indices where m.record.ops[i].key == key && m.record.ops[i].collection == c.name {
                if case .success(let n) = m.record.ops[i].apply(to: v) { v = n }
            }
        }
        setVisible(c, key, v, old: old, chained: true, at: overlaid)
    }

    /// The position in `chain` of the last mutation whose last op on the key is a put or a
    /// delete (whatever came before it, its result is that op's), or nil.
    private func lastWhole(_ chain: PendingChain, _ c: CollectionState, _ key: Key) -> Int? {
        for position in stride(from: chain.count - 1, through: 0, by: -1) {
            guard let m = live[MutationKey(chain[position])] else { continue }
            // A mutation of one op on the key's chain is that key's: nothing to search (most
            // are; the search compared both keys of each op).
            if m.record.ops.count == 1 { return m.record.ops[0].replacesRecord ? position : nil }
            let ops = m.record.ops
            guard let i = ops.lastIndex(where: { $0.key == key && $0.collection == c.name }) else { continue }
            return ops[i].replacesRecord ? position : nil
        }
        return nil
    }

    func recompute(_ addresses: TouchedRecords) {
        for a in addresses { recompute(collection(a.collection), a.key) }
    }

    /// The records `ops` would produce on top of `base` (visible or confirmed), all or nothing.
    /// With `skipFailing`, ops that cannot apply are skipped (the re-application rule).
    func evaluate(_ ops: [Op], on base: (CollectionState, Key) throws(OptimistError) -> Record?, skipFailing: Bool)
        throws(OptimistError) -> [(CollectionState, Key, Record?)] {
        try Self.evaluate(ops, in: { collection($0) }, on: base, skipFailing: skipFailing)
    }

    /// ``evaluate(_:on:skipFailing:)`` with the collections looked up by `lookup`: a staged
    /// batch evaluates outside the engine's locks, in the collections it made at its plan.
    static func evaluate(_ ops: [Op], in lookup: (Key) -> CollectionState,
                         on base: (CollectionState, Key) throws(OptimistError) -> Record?, skipFailing: Bool)
        throws(OptimistError) -> [(CollectionState, Key, Record?)] {
        var out = [(CollectionState, Key, Record?)]()
        out.reserveCapacity(ops.count)
        var slot = [RecordAddress: Int]()
        for op in ops {
            let c = lookup(op.collection)
            let a = RecordAddress(collection: op.collection, key: op.key)
            let index: Int? = ops.count == 1 ? nil : slot[a]
            let current: Record?
            if let index { current = out[index].2 } else { current = try base(c, op.key) }
            let next: Record?
            switch op.apply(to: current) {
            case .success(let r): next = r
            case .failure(let e):
                if skipFailing { next = current } else { throw e }
            }
            if let index {
                out[index].2 = next
            } else {
                if ops.count > 1 { slot[a] = out.count }
                out.append((c, op.key, next))
            }
        }
        return out
    }

    /// Writes `records` to the confirmed layer. Views count confirmed records (their persisted
    /// value) and visible ones; a key without overlay shows its confirmed record, so its
    /// visible value changes here too.
    func confirm(_ records: [(CollectionState, Key, Record?)]) {
        for (c, key, value) in records {
            confirm(c, key, value, old: c.views.isEmpty ? nil : confirmedRecord(c.name, key))
        }
    }

    /// One record of ``confirm(_:)-([(CollectionState,Key,Record?)])``, its confirmed value
    /// until now (`old`) already read by the caller (only the views need it).
    func confirm(_ c: CollectionState, _ key: Key, _ value: Record?, old: Record?) {
        confirm(c, key, value, old: old, shown: c.overlay.index(forKey: key) == nil)
    }

    /// The same, told whether V is C for this key (`shown`: no overlay; the storage write
    /// does not change it).
    @inline(__always) func confirm(_ c: CollectionState, _ key: Key, _ value: Record?, old: Record?, shown: Bool) {
        if !c.views.isEmpty {
            c.forEachView { v in
                if v.updateConfirmed(key: key, old: old, new: value) { noteViewChanged(v) }
                if shown { v.update(key: key, old: old, new: value) }
            }
            noteViewsTouched(c)
        }
        storage.setRecord(c.name, key, value)
        // V changes with C unless an overlay hides the key (a commit's own key: its refold
        // invalidates it, if V changes at all).
        if shown { dropCached(c, key) }
        log(.confirmed(collection: c.name, key: key, value: value))
    }

    /// Remembers that `c`'s views' values may have changed in the call in progress.
    @inline(__always) func noteViewsTouched(_ c: CollectionState) {
        guard !c.viewsTouched else { return }
        c.viewsTouched = true
        viewsTouched.append(c)
    }

    /// At the end of a call's state-lock hold: the views it changed show their new values
    /// to readers without the lock (see ``ViewDirectory``).
    func publishViews() {
        while let c = viewsTouched.popLast() {  // see `clearKeepingCapacity()`
            c.viewsTouched = false
            c.forEachView { $0.published.publish($0.value) }
        }
    }

    /// Publishes every view: at the open, and whenever the directory is given.
    func publishAllViews() {
        for (name, v) in views {
            v.published.publish(v.value)
            viewDirectory?.set(name, v.published)
        }
    }

    func noteViewChanged(_ v: ViewState) {
        guard journal != nil, !v.changed else { return }
        v.changed = true
        changedViews.append(v)
    }

    /// Journals the views whose confirmed value the call changed (one entry each).
    func logViews() {
        guard !changedViews.isEmpty else { return }
        for v in changedViews where v.changed {
            v.changed = false
            if !v.retired { log(.view(v.definition)) }
        }
        changedViews.clearKeepingCapacity()
    }

    // MARK: Lookup

    func liveMutation(_ id: MutationID) throws(OptimistError) -> LiveMutation {
        if let m = live[MutationKey(id)] { return m }
        if let s = ended.status(id) { throw .state("mutation \(id) is already \(s)") }
        throw .notFound("no mutation \(id)")
    }

    /// Mutation `id` as the store keeps it: live, or among the last ended ones (see
    /// ``RecentlyEnded``).
    func mutationRecord(_ id: MutationID) throws(OptimistError) -> MutationRecord {
        if let m = live[MutationKey(id)] { return m.record }
        if let r = recentlyEnded.record(id) { return r }
        if let s = ended.status(id) {
            throw .notFound("mutation \(id) is \(s); its record is kept only while it is among the last \(RecentlyEnded.capacity) mutations that ended since the store opened (optimist_status still gives its status)")
        }
        throw .notFound("no mutation \(id)")
    }

    func status(_ id: MutationID) throws(OptimistError) -> MutationStatus {
        if let m = live[MutationKey(id)] { return m.record.status }
        if let s = ended.status(id) { return s }
        throw .notFound("no mutation \(id)")
    }
}

extension Array {
    /// `removeAll(keepingCapacity: true)` for the engine's per-call lists, which hold a few
    /// elements: that goes through the generic `replaceSubrange`, which costs far more than
    /// removing the few elements one by one.
    @inline(__always) mutating func clearKeepingCapacity() {
        while !isEmpty { removeLast() }
    }
}
