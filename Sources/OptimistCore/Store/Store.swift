import OptimistModel
import OptimistThreads
import Synchronization

/// An optimistic store: confirmed state `C`, pending mutations `P`, and the visible state
/// `V = fold(P, C)` that every read returns.
///
/// Safe to use from many threads at once. Listeners run on the calling thread after the change
/// is visible, outside the store's locks, so they may read and mutate the store.
///
/// ## Locking: readers never wait for a writer's whole call
///
/// Three locks. The *writers' lock* orders every call that changes the store: one writer at a
/// time, for its whole call (a staged change: for each of its short steps), which hands its
/// journal to the persistence under it too (so the file receives changes in the order they
/// were made). The *confirmed writers' lock* is held by a staged change for its whole run,
/// and taken first by the calls that must not fall between its steps (arrangements, flush,
/// close); a plain change that finds a staged change in progress (`Engine.stagingActive`,
/// read under the writers' lock) waits for it there, unless it is a tap. The *state lock* guards the
/// engine's state against readers; a reader (get, scan, status, view values, explain ...)
/// takes only this one, and sees everything before some change and nothing of a change in
/// progress.
///
/// A writer holds the state lock only to publish. An ordinary change (a mutate, a commit, a
/// small server change) is its own publish: it runs under the state lock, for the
/// microseconds it takes. A server change of `stagingThreshold` records or more (a bulk
/// server apply, a big pull) is staged: its records are read (a chunk per state-lock hold)
/// and built with neither lock held while taps run between its steps, published as one layer
/// over the confirmed records in one short step (its cost is the taps made meanwhile and the
/// pending keys and view changes it touches, not its size; see `Engine+Staging.swift`), then moved
/// into the storage a chunk per state-lock hold while the layer still answers for them (see
/// `ConfirmedLayer`). A 100k-record batch therefore becomes visible at once, to readers
/// and listeners alike, and no reader waits for more than one chunk's step. Upkeep a change
/// makes due in the storage (an in-memory store's compaction or index merge, a regrown
/// table: O(records) each) is built after the publish, outside the state lock, and put in
/// place in one step of its own (`upkeepIfDue`).
///
/// A get of a record read before and unchanged since takes no state lock: the read cache
/// (`ReadCache`) answers it, kept right by every change of a visible value; so does a get of
/// a published staged batch's record (no pending mutation on it) until the batch's layer
/// goes, answered from the layer (`ReadCache.answer(from:)`). Neither does a
/// view's value: it is published at the end of each call that changes it (`ViewDirectory`).
public final class Store: Sendable {
    /// Orders the writers (see the type's comment).
    let writers: Lock
    /// Held by a staged batch for its whole run (and the writers' lock only for its short
    /// steps), and by the calls that must not fall between its steps (arrangements, flush,
    /// close), before ``writers``; a plain change that finds a staged batch in progress waits
    /// for it here (see ``change(_:_:)``).
    let confirmedWriters: Lock
    /// Guards ``engine`` against readers (see the type's comment).
    private let stateLock: Lock
    /// Read under ``stateLock``; changed under all the locks (only `close()` replaces it); read
    /// by a staging writer between its steps, which the confirmed writers' lock makes safe.
    nonisolated(unsafe) private var engine: Engine
    let sink: (any JournalSink)?
    /// Mirrors the engine's `closed`, for a check without the lock (the C boundary's per-call
    /// handle check); calls still check under the lock.
    private let closedFlag = Atomic<Bool>(false)
    private let staging = Atomic<Int>(Store.defaultStagingThreshold)
    /// 0: the store has an authority (a sync, or the app's own sender); 1: local-only in
    /// memory; 2: local-only on a store file (see `Store+LocalOnly.swift`).
    let localOnlyFlag = Atomic<Int>(0)
    /// Whether the storage defers upkeep to ``upkeepIfDue()`` (see ``init(engine:sink:retryPolicy:)``).
    private let hasUpkeep: Bool
    /// Visible records for gets that take no state lock (see ``ReadCache``).
    let readCache: ReadCache
    /// The views' published values, for view reads that take no state lock.
    let viewDirectory = ViewDirectory()
    /// Wakes the threads waiting for a change (see `Store+Waits.swift`).
    let signal = ChangeSignal()
    /// The stable id of this store, sent with each mutation id as the idempotency key.
    public let clientID: String

    /// An in-memory store. Its confirmed records are kept compact (as canonical JSON bytes),
    /// with up to `cacheBytes` of them parsed in a cache (see ``defaultCacheBytes``).
    ///
    /// - Throws: `.misuse` when `cacheBytes` is not positive (see ``checkedCacheBytes(_:)``).
    public convenience init(clientID: String = makeClientID(), retryPolicy: RetryPolicy = RetryPolicy(),
                            cacheBytes: Int) throws(OptimistError) {
        let budget = try Store.checkedCacheBytes(cacheBytes)
        self.init(engine: Engine(clientID: clientID, journaling: false, storage: MemoryStorage(cacheBytes: budget)),
                  sink: nil, retryPolicy: retryPolicy)
    }

    /// An in-memory store with the default cache budget (``defaultCacheBytes``).
    public convenience init(clientID: String = makeClientID(), retryPolicy: RetryPolicy = RetryPolicy()) {
        self.init(engine: Engine(clientID: clientID, journaling: false, storage: MemoryStorage()), sink: nil, retryPolicy: retryPolicy)
    }

    /// A store rebuilt from a snapshot into memory, sending every later change to `sink`.
    package convenience init(restoring snapshot: consuming StoreSnapshot, sink: any JournalSink, retryPolicy: RetryPolicy = RetryPolicy()) throws(OptimistError) {
        try self.init(restoring: snapshot, storage: MemoryStorage(), sink: sink, retryPolicy: retryPolicy)
    }

    /// A store rebuilt from a snapshot over `storage` (a store file's records), sending every
    /// later change to `sink`.
    package convenience init(restoring snapshot: consuming StoreSnapshot, storage: sending any ConfirmedStorage, sink: any JournalSink,
                             retryPolicy: RetryPolicy = RetryPolicy()) throws(OptimistError) {
        let e = try Engine(restoring: snapshot, journaling: true, storage: storage)
        self.init(engine: e, sink: sink, retryPolicy: retryPolicy)
    }

    private init(engine e: sending Engine, sink: (any JournalSink)?, retryPolicy: RetryPolicy) {
        e.retryPolicy = retryPolicy
        clientID = e.clientID
        // Compactions, index merges and regrown tables are built outside the state lock,
        // after the change that made them due (see `upkeepIfDue`), not inside its hold.
        e.storage.defersUpkeep = true
        // A storage that keeps the setting false has no upkeep to defer (a store file's):
        // its changes skip the check (an existential call and four retains per change).
        hasUpkeep = e.storage.defersUpkeep
        // As large as the storage's cache, and mostly the same records (shared, not copied).
        readCache = ReadCache(budget: e.storage.cacheBudget)
        e.readCache = readCache
        e.viewDirectory = viewDirectory
        e.publishAllViews()
        engine = e
        self.sink = sink
        // A writer waiting for its turn (a change, not a staged one) yields and retries for up
        // to ~0.5 ms before it sleeps: a writer's step is shorter than a sleeping thread's
        // wake-up. So does a waiting reader in an in-memory store, but not on a store file:
        // its background writer is a third busy thread, and a spinning reader takes the CPU it
        // needs (measured: it doubled a file's gets over 1 ms beside big batches and slowed its
        // writer; BENCHMARKS.md, past rounds: ae3ce7a). Writers yield on both: it raises two
        // writers' throughput against one's in memory and on a store file (past rounds:
        // ccf1acc, 3344bb4).
        stateLock = Lock(spins: sink == nil ? Self.spinsBeforeSleep : 0)
        writers = Lock(spins: Self.spinsBeforeSleep)
        confirmedWriters = Lock(spins: Self.spinsBeforeSleep)
    }

    /// How often a waiting writer, or a waiting reader of an in-memory store, yields before it
    /// sleeps (see ``Lock/init(spins:)``).
    static let spinsBeforeSleep = 500

    /// A cache budget as given, or clamped to ``maximumCacheBytes``.
    ///
    /// - Throws: `.misuse` for zero or a negative budget (a store cannot read without one;
    ///   the smallest positive budget keeps nothing between calls, which is slow but works).
    public static func checkedCacheBytes(_ bytes: Int) throws(OptimistError) -> Int {
        guard bytes > 0 else { throw .misuse("cache_bytes must be positive (got \(bytes)); the default is \(defaultCacheBytes)") }
        return min(bytes, maximumCacheBytes)
    }

    /// Runs `body` as one change: under both locks, then hands the journal to the sink (under
    /// the writers' lock only), then calls the listeners (and, when the call queued a
    /// mutation, wakes the attached sync).
    ///
    /// A staged batch in progress (``Engine/stagingActive``) lets taps in between its steps,
    /// and no other change: a tap changes no confirmed record, only pending mutations and
    /// visible values, and the batch's publish settles the keys it touched (see
    /// `Engine+Staging.swift`); any other change waits for the batch's end.
    func change<R: Sendable>(
        _ cause: ChangeCause, _ body: (Engine) throws(OptimistError) -> R
    ) throws(OptimistError) -> R {
        if cause == .mutate {
            // A tap: its own path, with no check for a staged batch (one less branch and no
            // optional outcome on the hot path).
            let (result, delivery, wake, fault) = try writing { (e) throws(OptimistError) in try made(e, cause, body) }
            try deliver(delivery, wake: wake, fault: fault)
            return result
        }
        while true {
            let outcome = try writing { (e) throws(OptimistError) -> (R, Delivery, (any StoreAttachment)?, OptimistError?)? in
                e.stagingActive ? nil : try made(e, cause, body)
            }
            if let (result, delivery, wake, fault) = outcome {
                try deliver(delivery, wake: wake, fault: fault)
                return result
            }
            // A staged batch holds the confirmed writers' lock for its whole run.
            confirmedWriters.lockedYielding {}
        }
    }

    /// ``change(_:_:)`` under the writers' lock: the change and its publish, then its journal
    /// handed over and the storage's upkeep it made due.
    @inline(__always) private func made<R: Sendable>(
        _ e: Engine, _ cause: ChangeCause, _ body: (Engine) throws(OptimistError) -> R
    ) throws(OptimistError) -> (R, Delivery, (any StoreAttachment)?, OptimistError?) {
        let (r, delivery, wake, fault) = try publishing {
            () throws(OptimistError) -> (R, Delivery, (any StoreAttachment)?, OptimistError?) in
            try openChange(e, cause)
            defer { e.storage.endCall() }
            let r: R
            do throws(OptimistError) { r = try body(e) } catch {
                e.storageFault = nil
                throw error
            }
            let fault = sealChange(e)
            let queued = cause == .mutate || cause == .retry
            return (r, e.takeDelivery(), queued ? e.attachment : nil, fault)
        }
        handOffJournal(e)
        // A tap writes no confirmed record, so it makes no upkeep due; and it may run while a
        // staged batch prepares the storage's.
        if cause != .mutate { upkeepIfDue() }
        return (r, delivery, wake, fault)
    }

    // MARK: The change envelope
    //
    // What every change does around its own work, plain (``change(_:_:)``) or staged
    // (``changeStaged(_:outcomes:cursor:)``), written once, in the order a change takes it.

    /// 1. Before anything changes: a closed store and a background write failure not yet
    /// reported refuse the change.
    @inline(__always) func openChange(_ e: Engine, _ cause: ChangeCause) throws(OptimistError) {
        guard !e.closed else { throw OptimistError.misuse("the store is closed") }
        if e.readOnly { throw Self.readOnlyRefusal }
        if let error = sink?.takeError() { throw error }
        e.cause = cause
    }

    /// 2. At the publish, under the state lock: the views' new values logged and published, and
    /// a read that failed after the call's prefetch (see ``Engine/visible(_:_:)``) taken: the
    /// change stands and is delivered, and the caller hears of the failure.
    @inline(__always) func sealChange(_ e: Engine) -> OptimistError? {
        e.logViews()
        e.publishViews()
        let fault = e.storageFault
        e.storageFault = nil
        return fault
    }

    /// 3. After the publish, still under the writers' lock: the journal to the sink, in the
    /// order the change wrote it (a staged change's own entries first, then what its publish
    /// added). The plain path's entries are moved from where the engine wrote them, which leaves
    /// the buffer empty with its capacity for the next change: only writers touch it, and this
    /// one still holds the writers' lock (taken out under the state lock, the buffer was shared
    /// when emptied, so every call allocated a new one).
    @inline(__always) func handOffJournal(_ e: Engine, staged: [JournalEntry]? = nil) {
        guard let sink else { return }
        if let staged {
            // The staged entries as one block: its append is one step, not one per record.
            var journal: [JournalEntry] = staged.isEmpty ? [] : [.block(staged)]
            if let rest = e.takeJournal() { journal.append(contentsOf: rest) }
            if !journal.isEmpty { sink.append(journal, number: e.storage.sealAppend()) }
        } else if e.journal?.isEmpty == false {
            sink.append(taking: &e.journal!, number: e.storage.sealAppend())
        }
    }

    /// 4. Outside every lock: the listeners get their changes, the sync hears of a queued
    /// mutation, and the caller of a change with a storage fault gets the fault.
    @inline(__always) func deliver(_ delivery: Delivery, wake: (any StoreAttachment)? = nil,
                                   fault: OptimistError?) throws(OptimistError) {
        signal.changed()
        for (listener, changes) in delivery { listener(changes) }
        wake?.storeDidQueue()
        if let fault { throw fault }
    }

    /// Runs `body` under the writers' lock (yielding while it waits) with the engine borrowed:
    /// only ``close()`` replaces the engine, under that lock, so a change needs no reference
    /// of its own. (Retained, the engine cost every tap and commit a retain and a release.)
    @inline(__always) func writing<R, E: Error>(_ body: (Engine) throws(E) -> R) throws(E) -> R {
        try writers.lockedYielding { () throws(E) -> R in try Unmanaged.passUnretained(engine).borrowing(body) }
    }

    /// After a change's publish, under the writers' lock: the storage upkeep the change made
    /// due (see ``ConfirmedStorage/defersUpkeep``), built outside the state lock and put in
    /// place in one short step, as a staged change's is. Readers keep reading the old
    /// arrangement meanwhile; a scan merges a copy of an index being rebuilt (`holdsUpkeep`).
    private func upkeepIfDue() {
        guard hasUpkeep else { return }
        let e = engine
        guard e.storage.upkeepDue else { return }
        state { e in e.storage.holdsUpkeep = true }
        let upkeep = e.storage.prepareUpkeep()
        let replaced = state { e -> Any? in
            e.storage.holdsUpkeep = false
            return upkeep?.install()
        }
        withExtendedLifetime(replaced) {}  // freed here, outside the lock
    }

    /// Runs `body` under the state lock only: a reader.
    func read<R: Sendable>(_ body: (Engine) throws(OptimistError) -> R) throws(OptimistError) -> R {
        stateLock.lockAsReader()
        defer { stateLock.unlock() }
        let e = engine
        guard !e.closed else { throw OptimistError.misuse("the store is closed") }
        defer { e.storage.endCall() }
        return try body(e)
    }

    /// Runs `body` under both locks, with no journal and no listeners: a change to the
    /// store's own arrangements (subscriptions, the attached sync, the retry policy), which
    /// a staging writer reads between its steps.
    func arrange<R: Sendable>(_ body: (Engine) throws(OptimistError) -> R) throws(OptimistError) -> R {
        try confirmedWriters.locked { () throws(OptimistError) -> R in
            try writers.locked { () throws(OptimistError) -> R in
                try stateLock.locked { () throws(OptimistError) -> R in
                    let e = engine
                    guard !e.closed else { throw OptimistError.misuse("the store is closed") }
                    return try body(e)
                }
            }
        }
    }

    /// Runs a writer's `body` under the state lock, then lets in the threads that queued
    /// behind it before the writer goes on (see ``Lock/unlockAsWriter()``).
    ///
    /// A writer waits for the state lock counted, as a reader does (``Lock/lockAsReader()``):
    /// a tap made while a staged batch moves its records in takes turns with the batch's
    /// steps. Uncounted, the batch let go and took the lock again before the woken tap could
    /// run, at each of its ~400 steps: a tap waited for all of them (35-100 ms on a 16-core
    /// machine, ~390 sleeps each; `WRITERS_RUSAGE=1` in Benchmarks/C/writers.c).
    @inline(__always) func publishing<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        stateLock.lockAsReader()
        defer { stateLock.unlockAsWriter() }
        return try body()
    }

    /// Runs `body` under the state lock alone: one step of a staged change, made while the
    /// caller holds the confirmed writers' lock (taps may run between two steps).
    func state<R, E: Error>(_ body: (Engine) throws(E) -> R) throws(E) -> R {
        try publishing { () throws(E) -> R in
            defer { engine.storage.endCall() }
            return try body(engine)
        }
    }

    /// The engine, for a staging writer between its state-lock steps (see ``engine``).
    var unlockedEngine: Engine { engine }

    /// Called by a staged change after its publish and refill, before it moves its records
    /// into the storage (its layer answering, the confirmed writers' lock held, the others free):
    /// for tests, which set it before the change.
    nonisolated(unsafe) package var afterStagedPublish: (() -> Void)?

    /// Server changes of this many records or more are staged (see the type's comment);
    /// tests lower it to stage small ones.
    package var stagingThreshold: Int {
        get { staging.load(ordering: .relaxed) }
        set { staging.store(newValue, ordering: .relaxed) }
    }

    /// Runs `body` under both locks, closed or not.
    private func locked<R: Sendable>(_ body: (Engine) -> R) -> R {
        confirmedWriters.locked { writers.locked { stateLock.locked { body(engine) } } }
    }

    // MARK: Mutations

    /// Applies `ops` to the visible state at once, as one atomic mutation, and returns its id.
    ///
    /// - Throws: `.invalid` if an op cannot apply, or if the ops are over a limit of
    ///   `Limits` (OptimistModel) (a collection or key over `maxNameBytes` bytes, a value nested deeper than
    ///   `maxDepth`, more than `maxOpsPerMutation` ops, more than `maxMutationBytes` of JSON
    ///   text): nothing changes; `.duplicate` if a not-yet-ended mutation holds `dedupeKey`
    ///   (nothing changes); `.state` once every id up to 2^53 - 1 (the largest a JSON number
    ///   carries exactly) is used.
    @discardableResult
    public func mutate(_ ops: [Op], dedupeKey: String? = nil, policy: FailurePolicy = .rollback) throws(OptimistError) -> MutationID {
        // Checked here, before the writers' lock: a mutation a server would refuse as a whole
        // request must never reach the outbox.
        try Limits.check(ops)
        return try mutate(checked: ops, dedupeKey: dedupeKey, policy: policy)
    }

    /// ``mutate(_:dedupeKey:policy:)`` of ops the caller already found within `Limits`
    /// (the C entry points, which tally the ops as they build them: `Limits/Tally`).
    package func mutate(checked ops: [Op], dedupeKey: String?, policy: FailurePolicy) throws(OptimistError) -> MutationID {
        let id = try change(.mutate) { e throws(OptimistError) in try e.mutate(ops, dedupeKey: dedupeKey, policy: policy) }
        if commitsAtOnce { try commit(id) }
        return id
    }

    /// ``mutate(_:dedupeKey:policy:)`` of one put, with the default options: what a tap
    /// makes. The engine takes the put's parts as given, where from an array of ops it
    /// copies the op to take it apart (retaining its keys and record, then releasing them).
    /// The caller has checked the put against `Limits` (the C entry points tally it as they
    /// build it, `Limits/Tally`).
    package func mutate(checkedPut collection: Key, _ key: Key, _ value: Record) throws(OptimistError) -> MutationID {
        let ops = [Op.put(collection: collection, key: key, value: value)]
        let id = try change(.mutate) { e throws(OptimistError) in try e.mutate(put: collection, key, value, ops: ops) }
        if commitsAtOnce { try commit(id) }
        return id
    }

    /// The authority accepted mutation `id`: `C := apply(serverOps ?? its own ops, C)`.
    ///
    /// - Throws: `.notFound` for an unknown id, `.state` if it already ended, `.invalid` if a
    ///   server op cannot apply (nothing changes).
    public func commit(_ id: MutationID, serverOps: [Op]? = nil) throws(OptimistError) {
        try change(.commit) { e throws(OptimistError) in try e.commit(id, serverOps: serverOps) }
    }

    /// Commits mutation `id` after the authority gave records it created keys of its own:
    /// each rename moves the record and its pending layers from the temporary key to the
    /// server's (every not-ended mutation's ops on the old key are rewritten, so later edits
    /// are sent under the real key), then the commit applies `serverOps` (or the mutation's
    /// own ops, renamed). The same effect and order as a sync's `ok` with renames.
    ///
    /// ```swift
    /// // The app's backend created the todo and answered with its own id.
    /// try store.commit(id, renames: [KeyRename(collection: "todos", from: "tmp-1", to: "812")])
    /// ```
    ///
    /// - Throws: as ``commit(_:serverOps:)``; a commit that cannot apply changes nothing, its
    ///   renames included.
    public func commit(_ id: MutationID, serverOps: [Op]? = nil, renames: [KeyRename]) throws(OptimistError) {
        try change(.commit) { e throws(OptimistError) in try e.commit(id, serverOps: serverOps, renames: renames) }
    }

    /// Mutation `id` failed: the visible state becomes what it would be had it never been
    /// applied; every other pending mutation keeps its effect. `reason` is for the caller's
    /// logs; an ended mutation keeps only its status.
    public func rollback(_ id: MutationID, reason: String? = nil) throws(OptimistError) {
        try change(.rollback) { e throws(OptimistError) in try e.rollback(id, reason: reason) }
    }

    /// An authoritative change from outside, applied to `C`; pending mutations are re-applied
    /// on top.
    public func serverApply(_ ops: [Op]) throws(OptimistError) {
        if ops.count >= stagingThreshold { return try changeStaged(ops, outcomes: [], cursor: nil) }
        try change(.server) { e throws(OptimistError) in try e.serverApply(ops) }
    }

    // MARK: Reads

    /// The visible record, or nil.
    ///
    /// A record read before and unchanged since comes from the read cache, without the state
    /// lock: such a get never waits for a writer (see `ReadCache`).
    public func get(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        let a = RecordAddress(collection: collection, key: key)
        if !closedFlag.load(ordering: .acquiring), let hit = readCache.lookup(a) { return hit }
        let (r, ticket) = try read { e throws(OptimistError) in (try e.get(collection, key), readCache.ticket(a)) }
        readCache.fill(a, r, ticket: ticket)
        return r
    }

    /// The confirmed record, or nil.
    public func confirmed(_ collection: Key, _ key: Key) throws(OptimistError) -> Record? {
        try read { e throws(OptimistError) in try e.confirmed(collection, key) }
    }

    /// Whether a pending, inflight or failed mutation touches the record.
    public func isPending(_ collection: Key, _ key: Key) throws(OptimistError) -> Bool {
        try read { e in e.isPending(collection, key) }
    }

    /// The record's status: `failed` when a kept failure touches it, `pending` when another
    /// not-yet-ended mutation does, else `confirmed` (also for a record that does not exist).
    public func recordStatus(_ collection: Key, _ key: Key) throws(OptimistError) -> RecordStatus {
        try read { e in e.collections[collection].map { e.recordStatus($0, key) } ?? .confirmed }
    }

    /// Visible records whose key starts with `prefix`, in byte order; `limit` 0 means all.
    public func scan(_ collection: Key, prefix: Key = "", limit: Int = 0) throws(OptimistError) -> [(key: Key, value: Record)] {
        try read { e throws(OptimistError) in try e.scan(collection, prefix: prefix, limit: limit) }
    }

    public func status(_ id: MutationID) throws(OptimistError) -> MutationStatus {
        try read { e throws(OptimistError) in try e.status(id) }
    }

    /// Mutations not yet ended (pending, inflight or failed).
    public func pendingCount() throws(OptimistError) -> Int {
        try read { e in e.live.count }
    }

    /// A mutation as the store keeps it: a not-yet-ended one, or one of the last 1,000 that
    /// ended since the store opened (its final status and its `lastError`: why it was undone).
    ///
    /// ```swift
    /// let m = try store.mutation(id)
    /// if m.status == .rolledBack { showToast("Not saved: \(m.lastError ?? "unknown reason")") }
    /// ```
    ///
    /// - Throws: `.notFound` for an id never handed out, or one that ended before the last
    ///   1,000 (``status(_:)`` still gives its status).
    public func mutation(_ id: MutationID) throws(OptimistError) -> MutationRecord {
        try read { e throws(OptimistError) in try e.mutationRecord(id) }
    }

    // MARK: Outbox

    /// Hands out the oldest due pending mutation and marks it inflight; nil when none is due.
    ///
    /// - Throws: `.misuse` while a sync runs (it sends the outbox itself).
    public func outboxNext(now: Int64) throws(OptimistError) -> MutationRecord? {
        if isLocalOnly { throw Self.localOnlyHasNoOutbox }
        return try change(.sync) { e throws(OptimistError) in
            guard e.attachment == nil else { throw .misuse("a sync is running: it sends the outbox itself") }
            return e.outboxNext(now: now)
        }
    }

    /// A send failed. Transient failures come back pending after exponential backoff with
    /// jitter, counted from `now`; after the retry limit, or when permanent, the mutation's
    /// policy decides (roll back, or keep it visible as `failed`).
    public func fail(_ id: MutationID, transient: Bool, reason: String? = nil, now: Int64) throws(OptimistError) {
        try change(.fail) { e throws(OptimistError) in try e.fail(id, transient: transient, reason: reason, now: now) }
    }

    /// Makes a failed (or backing-off pending) mutation due again at once.
    public func retry(_ id: MutationID) throws(OptimistError) {
        try change(.retry) { e throws(OptimistError) in try e.retry(id) }
    }

    public var retryPolicy: RetryPolicy {
        get { stateLock.locked { engine.retryPolicy } }
        set { locked { $0.retryPolicy = newValue } }
    }

    // MARK: Freshness

    /// Records that keys `from...to` of `collection` were loaded from the authority at `at`.
    public func markLoaded(_ collection: Key, from: Key, to: Key, at: Int64) throws(OptimistError) {
        guard !(to < from) else { throw .misuse("mark_loaded: from must not sort after to") }
        try change(.server) { e in e.markLoaded(collection, LoadedRange(from: from, to: to, at: at)) }
    }

    /// Whether `key` lies outside every loaded range, or only in ranges older than `maxAge`.
    public func needsReload(_ collection: Key, _ key: Key, now: Int64, maxAge: Int64) throws(OptimistError) -> Bool {
        try read { e in e.needsReload(collection, key, now: now, maxAge: maxAge) }
    }

    // MARK: Views

    /// Defines (or redefines) an aggregate over the visible records of `collection` whose key
    /// starts with `prefix`, maintained on every change; read it with ``viewValue(_:)-(String)``.
    ///
    /// A store file keeps its views: after a reopen the view is there, with its value, and
    /// nothing is recomputed. Defining a view over existing records computes it where they
    /// are (one query on a store file), without loading them.
    public func defineView(_ name: String, collection: Key, prefix: Key = "", kind: ViewKind) throws(OptimistError) {
        try change(.server) { e throws(OptimistError) in try e.defineView(name: Key(name), collection: collection, prefix: prefix, kind: kind) }
    }

    public func viewValue(_ name: String) throws(OptimistError) -> Double { try viewValue(Key(name)) }

    /// The same read with the name as a key, for callers that already hold one.
    ///
    /// Takes no state lock: the value is the one published at the end of the last call that
    /// changed it (see `ViewDirectory`).
    public func viewValue(_ name: Key) throws(OptimistError) -> Double {
        if !closedFlag.load(ordering: .acquiring), let v = viewDirectory.value(name) { return v }
        return try read { e throws(OptimistError) in
            guard let v = e.views[name] else { throw .notFound("no view \(name)") }
            return v.value
        }
    }

    // MARK: Subscriptions

    /// Calls `listener` once per state-changing call with the records (of `collection`, whose
    /// key starts with `prefix`; nil: all) whose visible value or pending flag changed.
    @discardableResult
    public func subscribe(collection: Key? = nil, prefix: Key? = nil,
                          _ listener: @escaping @Sendable ([Change]) -> Void) throws(OptimistError) -> UInt64 {
        try arrange { e in
            let id = e.nextSubscription
            e.nextSubscription += 1
            e.subscriptions[id] = Subscription(collection: collection, prefix: prefix, listener: listener)
            return id
        }
    }

    public func unsubscribe(_ id: UInt64) throws(OptimistError) {
        try arrange { e throws(OptimistError) in
            guard e.subscriptions.removeValue(forKey: id) != nil else { throw .notFound("no subscription \(id)") }
        }
    }

    /// The batches of changes as an async sequence; ends its subscription when the consumer
    /// stops iterating.
    public func changes(collection: Key? = nil, prefix: Key? = nil) throws(OptimistError) -> AsyncStream<[Change]> {
        let (stream, continuation) = AsyncStream<[Change]>.makeStream()
        let id = try subscribe(collection: collection, prefix: prefix) { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in try? self?.unsubscribe(id) }
        return stream
    }

    // MARK: Life

    /// Returns once everything that happened before the call is durable (no-op in memory).
    /// In a local-only store, every mutation made before the call is then committed (or,
    /// when the write failed, settled by its policy, and the failure thrown).
    public func flush() throws(OptimistError) {
        if localOnlyFlag.load(ordering: .acquiring) == 2 {
            try settleLocal()
            // The commits themselves durable too.
        }
        try flushJournal()
    }

    /// ``flush()`` of the journal alone: everything before the call on disk. With
    /// `reportingEarlier` false, a background failure already over (not reported yet) is left
    /// for the next call to report: only a write of what this flush waits for that fails
    /// throws (the local-only commit round, whose mutations an earlier failure did not hold).
    func flushJournal(reportingEarlier: Bool = true) throws(OptimistError) {
        // Behind the writers' lock: a change readers already see (its state-lock hold is
        // over) may still be handing its journal to the sink, and the flush must cover it
        // (crash_sweep caught a pull's cursor read before a flush and lost after it).
        try confirmedWriters.locked { () throws(OptimistError) in try writers.locked { () throws(OptimistError) in try read { _ in } } }
        if reportingEarlier, let error = sink?.takeError() { throw error }
        try sink?.flush()
    }

    /// Flushes and closes; later calls throw `.misuse`. Closing twice is a no-op. The records
    /// are dropped, so a closed store kept referenced holds next to no memory.
    public func close() throws(OptimistError) {
        // The sync stops first, outside the lock: its thread may be inside a store call.
        let attached = stateLock.locked { engine.attachment }
        attached?.storeWillClose()
        // The open engine is freed after the locks are let go: freeing many pending mutations
        // takes long, and a reader arriving meanwhile should hear at once that the store is
        // closed, not wait for that. (Freed before the sink closes, so that the writer thread
        // finishes its last batch meanwhile.)
        var old: Engine?
        var dropped: [RecordCache]?
        let wasOpen = confirmedWriters.locked { writers.locked {
            stateLock.locked {
                guard !engine.closed else { return false }
                engine.storage.close()
                dropped = readCache.invalidateAll()
                viewDirectory.removeAll()
                old = engine
                engine = Engine(clientID: engine.clientID, journaling: false, storage: MemoryStorage(cacheBytes: 1))
                engine.closed = true
                return true
            }
        } }
        guard wasOpen else { return }
        closedFlag.store(true, ordering: .releasing)
        signal.wakeAll()  // waiters look again and hear that the store is closed
        withExtendedLifetime((old, dropped)) {}  // the last references: freed here
        old = nil
        try sink?.close()
    }

    public var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    /// What the record cache holds now: entries and their estimated bytes (for tests and
    /// diagnostics; the budget is the `cacheBytes` the store was opened with).
    package var cacheUsage: (entries: Int, bytes: Int) { stateLock.locked { engine.storage.cacheUsage } }

    /// What the read cache holds now (see ``ReadCache``): entries and their estimated bytes.
    package var readCacheUsage: (entries: Int, bytes: Int) { readCache.usage }

    /// Runs `body` on the confirmed records' storage under both locks, for tests.
    package func withStorage<R: Sendable>(_ body: (any ConfirmedStorage) -> R) -> R { locked { body($0.storage) } }

    // MARK: Attachments

    /// Attaches `a` (the store's sync): it hears of queued mutations and of the close.
    ///
    /// - Throws: `.misuse` when one is attached already.
    package func attach(_ a: any StoreAttachment) throws(OptimistError) {
        try arrange { e throws(OptimistError) in
            guard e.attachment == nil else { throw .misuse("a sync is already running on this store") }
            e.attachment = a
        }
    }

    /// Detaches `a` if it is the attached one.
    package func detach(_ a: any StoreAttachment) {
        locked { e in
            if let current = e.attachment, current === a { e.attachment = nil }
        }
    }

    /// The attached sync, if any.
    package var attachment: (any StoreAttachment)? { stateLock.locked { engine.attachment } }
}

/// Something that runs beside a store and must hear of it (the sync).
package protocol StoreAttachment: AnyObject, Sendable {
    /// A mutation became due (mutate, retry): a chance to send it now. Called outside the
    /// store's lock, on the thread that made the change; it must return at once.
    func storeDidQueue()
    /// The store is closing: stop, and return once no store call of yours is in progress.
    func storeWillClose()
}
