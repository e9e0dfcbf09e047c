import OptimistModel
import OptimistThreads
import Synchronization

/// Visible records by address, for a ``Store/get(_:_:)`` that takes no state lock: a get
/// that finds its record here never waits for a writer, however long the writer's hold.
///
/// ## Why it stays right
///
/// An entry is a record's visible value `V[key]` as a reader found it under the state lock
/// (or nil: known absent). Every change to a visible value drops the entry under the same
/// lock hold that makes the change (``invalidate(_:_:)`` from
/// ``Engine/setVisible(_:_:_:old:mergingIndex:)`` and ``Engine/confirm(_:_:_:old:)``; all
/// of them at once when a staged batch publishes, ``setAside(answering:)``, put back with
/// their new values by ``refill()``, and answering meanwhile with those values), and counts
/// an invalidation in the shard. A reader
/// adds an entry after it let go of the state lock (``fill(_:_:ticket:)``), and only when its
/// shard saw no invalidation since it read the value under that lock (``ticket(_:)``). So an
/// entry always holds the current value, and a get served from here returns the value of some moment
/// between its call and its return, as a get under the state lock does. A writer's change
/// of several records is seen whole: a record it changed either answers from the state
/// lock's side after the writer has let go (its entry dropped), or from here before the
/// writer dropped it; a thread that sees one of the change's new values and then reads
/// another record has waited for the state lock behind the whole change.
///
/// A published staged batch's layer answers a miss too (``answer(from:)``), for the batch's
/// records that no mutation overlays, until the layer goes: right for the same reason as
/// the set-aside entries (only taps change a visible value while the batch's writer holds the
/// confirmed writers' lock, and a record a tap changed is answered no more), and what keeps a reader of the batch's records from waiting for the
/// steps that move them into the storage.
///
/// ## Bounded
///
/// Split in ``shardCount`` shards by address, each with a pthread mutex of its own, held for
/// a lookup or an insert only (a reader and a writer meet on a shard for a dictionary
/// probe, never for a call), and each a ``RecordCache`` with an equal part of the budget:
/// CLOCK eviction, trimmed at every insert. Its records are mostly the ones the storage's
/// cache holds too (the same dictionaries, shared, not copied); the budget bounds the rest.
final class ReadCache: @unchecked Sendable {
    // Stored properties are `@exclusivity(unchecked)`: each shard's under its own lock (see `Engine`).
    private final class Shard {
        let lock = Lock()
        @exclusivity(unchecked) var cache: RecordCache
        /// Counts the shard's invalidations (see ``ticket(_:)``).
        let epoch = Atomic<UInt64>(0)
        /// From a staged batch's publish until ``refill()`` is done with the shard: the
        /// entries the publish set aside, and the batch's values (see ``setAside(answering:)``).
        @exclusivity(unchecked) var aside: (entries: RecordCache, changed: (RecordAddress) -> Record??)?
        /// From a staged batch's publish until its layer goes (see ``answer(from:)``): the
        /// visible values of the batch's records that no mutation overlays.
        @exclusivity(unchecked) var answering: ((RecordAddress) -> Record??)?
        /// While ``aside`` or ``answering`` is set: the records whose visible value changed
        /// since (a tap made between a staged batch's steps). Neither answers for them, and
        /// the refill does not put them back: a reader reads them under the state lock.
        @exclusivity(unchecked) var overtaken: Set<RecordAddress> = []
        init(budget: Int) { cache = RecordCache(budget: budget) }

        /// Ends the staged batch's answers when neither is left.
        func settleIfDone() {
            if aside == nil && answering == nil && !overtaken.isEmpty { overtaken = [] }
        }
    }

    static let shardBits = 6
    static let shardCount = 1 << shardBits
    /// The shards, owned (for the O(shards) steps).
    private let shards: [Shard]
    /// The same shards, unretained, for the per-record steps: `shards[i]` retains and releases
    /// the shard and its lock around each pthread call, in every visible change's
    /// invalidation. They live as long as `shards`, so as long as `self`.
    private let shardRefs: UnsafeMutableBufferPointer<Unmanaged<Shard>>
    private let shardBudget: Int

    /// - Parameter budget: estimated bytes of parsed records (see ``RecordCache/footprint(_:)``),
    ///   split evenly between the shards.
    init(budget: Int) {
        let b = max(1, budget >> Self.shardBits)
        shardBudget = b
        shards = (0..<Self.shardCount).map { _ in Shard(budget: b) }
        shardRefs = .allocate(capacity: Self.shardCount)
        _ = shardRefs.initialize(from: shards.map { Unmanaged.passUnretained($0) })
    }

    deinit { shardRefs.deallocate() }

    /// Runs `body` with the record's shard, not retained (see ``shardRefs``): bits of a
    /// multiplicative mix of the keys' cached hashes, apart from the top ones the shard's own
    /// ``RecordCache`` splits its table by.
    @inline(__always) private func withShard<R>(_ collection: Key, _ key: Key, _ body: (Shard) -> R) -> R {
        let h = (collection.bytesHash &* 31 &+ key.bytesHash) &* 0x9e37_79b9_7f4a_7c15
        return shardRefs[Int(truncatingIfNeeded: (h >> 32) & UInt64(Self.shardCount - 1))]._withUnsafeGuaranteedRef(body)
    }

    /// `.some(value)` when the record's visible value is here (nil: known absent); nil when
    /// the caller must read it under the state lock. Any thread, no other lock needed.
    @inline(__always) func lookup(_ a: RecordAddress) -> Record?? {
        withShard(a.collection, a.key) { s in
            s.lock.lock()
            defer { s.lock.unlock() }
            if let hit = s.cache.lookup(a) { return hit }
            guard s.aside != nil || s.answering != nil else { return nil }
            return lookupBeside(a, s)
        }
    }

    /// A lookup beside the shard's own entries, while a staged batch publishes: first in the
    /// entries its publish set aside and its refill has not put back yet (the batch's value
    /// if it has the record, else the entry's own: what ``refill()`` will put back), then in
    /// the batch's layer (``answer(from:)``). Under the shard's lock; apart, so that an
    /// ordinary lookup stays small.
    @inline(never) private func lookupBeside(_ a: RecordAddress, _ s: Shard) -> Record?? {
        if !s.overtaken.isEmpty && s.overtaken.contains(a) { return nil }
        if let aside = s.aside, let old = aside.entries.peek(a) { return aside.changed(a) ?? old }
        return s.answering?(a)
    }

    /// Taken under the state lock with the record's visible value, for ``fill(_:_:ticket:)``
    /// after that lock is let go: the number of invalidations its shard has seen.
    @inline(__always) func ticket(_ a: RecordAddress) -> UInt64 {
        withShard(a.collection, a.key) { $0.epoch.load(ordering: .relaxed) }
    }

    /// Keeps `value`, read under the state lock with `ticket`, as the record's visible value,
    /// unless its shard saw an invalidation since: then a writer may have changed the value
    /// after it was read, and it is not kept. Any thread: the fill's cost (an estimate of
    /// the record's bytes, an insert, perhaps an eviction) is not spent inside the state
    /// lock, where it would make the writers wait.
    func fill(_ a: RecordAddress, _ value: Record?, ticket: UInt64) {
        withShard(a.collection, a.key) { s in
            s.lock.lock()
            defer { s.lock.unlock() }
            guard s.epoch.load(ordering: .relaxed) == ticket else { return }
            s.cache.insert(a, value)
            s.cache.trim()
        }
    }

    /// The record's visible value changes: its entry goes. Under the state lock, in the hold
    /// that makes the change.
    @inline(__always) func invalidate(_ collection: Key, _ key: Key) {
        withShard(collection, key) { s in
            s.lock.lock()
            defer { s.lock.unlock() }
            s.epoch.wrappingAdd(1, ordering: .relaxed)
            // A tap between a staged batch's steps: the batch's answers no longer hold for it.
            if s.aside != nil || s.answering != nil { s.overtaken.insert(RecordAddress(collection: collection, key: key)) }
            // The address is built only for a shard with entries to look through.
            if s.cache.count > 0 { s.cache.remove(RecordAddress(collection: collection, key: key)) }
        }
    }

    /// Every entry goes (the store closes), in O(shards) under the state lock: the entries
    /// are handed back for the caller to free after it lets go (a full cache's release takes
    /// milliseconds).
    func invalidateAll() -> [RecordCache] {
        var old = [RecordCache]()
        old.reserveCapacity(shards.count)
        for s in shards {
            s.lock.lock()
            s.epoch.wrappingAdd(1, ordering: .relaxed)
            old.append(s.cache)
            s.cache = RecordCache(budget: shardBudget)
            s.answering = nil
            s.aside = nil
            s.overtaken = []
            s.lock.unlock()
        }
        return old
    }

    /// A staged batch publishes: every entry goes, in O(shards) under the state lock, into
    /// its shard's set-aside entries, which ``refill()`` puts back with the batch's values
    /// (`changed(address)`: nil for a record the batch does not have).
    ///
    /// Until then, a lookup that misses the shard's fresh cache is answered from them:
    /// `changed(address)` when that is not nil, else the entry's own value. Right for the
    /// same reason the refill is (nothing changes a visible value until it is done). Without
    /// it, every get while a big batch's refill ran missed: it read
    /// the record under the state lock and filled the entry the refill was about to put back.
    func setAside(answering changed: @escaping (RecordAddress) -> Record??) {
        for s in shards {
            s.lock.lock()
            s.epoch.wrappingAdd(1, ordering: .relaxed)
            s.aside = (s.cache, changed)
            s.cache = RecordCache(budget: shardBudget)
            s.lock.unlock()
        }
    }

    /// A staged batch publishes its layer: until ``stopAnswering()``, a lookup that misses
    /// is answered by `visible(address)` when that is not nil: the visible value of a record
    /// the batch has and no mutation overlays (a delete as known absent), which is its value
    /// in the batch's layer. In the publish's hold, under the state lock, in O(shards).
    ///
    /// Right for as long as the layer is published: the staged batch holds the confirmed
    /// writers' lock from before its publish until after its layer goes, so only taps change
    /// a visible value meanwhile (its moves into the storage change where a record is kept,
    /// not its value), and a record a tap changes is left out from then on (``Shard/overtaken``);
    /// the keys that a mutation overlaid at the publish (whose visible value is not the
    /// layer's) are left out by `visible`. Without it, a get of any batch
    /// record the cache did not hold read it under the state lock, and waited for each step
    /// that moves the batch into the storage (a 100k-record batch takes ~400 of them).
    func answer(from visible: @escaping (RecordAddress) -> Record??) {
        for s in shards {
            s.lock.lock()
            s.answering = visible
            s.lock.unlock()
        }
    }

    /// The layer ``answer(from:)`` answered from goes (its records are all in the storage,
    /// with the same values). In that hold, under the state lock.
    func stopAnswering() {
        for s in shards {
            s.lock.lock()
            let old = s.answering
            s.answering = nil
            s.settleIfDone()
            s.lock.unlock()
            withExtendedLifetime(old) {}  // released outside the shard's lock
        }
    }

    /// Puts back the entries ``setAside(answering:)`` set aside, each with its value now:
    /// `changed(address)` when that is not nil (a staged batch's record: its layer's value),
    /// else the entry's own. For a staged batch's writer after its publish, under the
    /// confirmed writers' lock only, while readers fill beside it. Sound because only taps
    /// change a visible value meanwhile, and each such record is left out (``Shard/overtaken``),
    /// and because the publish set the entries aside last in its hold: any other record its hold changed
    /// (a pending key refolded, a pull's outcome) was invalidated before, so it is not among
    /// them. (A refold that found the value it had keeps its entry only when no mutation
    /// overlays the key: its visible value is then its confirmed one, which `changed` gives.)
    /// Without it, a reader's every get after a 100k-record batch would miss once.
    @inline(never)  // once a batch; kept apart so that a profile can count it alone
    func refill() {
        for s in shards {
            s.lock.lock()
            guard let (cache, changed) = s.aside else {
                s.lock.unlock()
                continue
            }
            // The publish left a fresh shard: room for them all at once, rather than tables
            // regrown step by step.
            s.cache.reserveCapacity(cache.count)
            s.lock.unlock()
            // Read only, here and by the readers' lookups (`peek`): never copied.
            cache.forEach { a, value, bytes in
                // The new value's size estimate is made outside the shard's lock; an entry
                // the batch left alone keeps its own.
                let now = changed(a)
                let size = now.map { RecordCache.footprint($0) } ?? bytes
                s.lock.lock()
                // A reader may have filled it already: with the same value, unless a tap
                // changed it since the publish (then its entry stays out).
                guard s.overtaken.isEmpty || !s.overtaken.contains(a) else {
                    s.lock.unlock()
                    return
                }
                s.cache.insert(a, now ?? value, bytes: size)
                s.cache.trim()
                s.lock.unlock()
            }
            // Every entry is back: the shard answers from its own cache again. The entries
            // set aside are released with `cache`, outside the shard's lock.
            s.lock.lock()
            s.aside = nil
            s.settleIfDone()
            s.lock.unlock()
        }
    }

    /// Entries and estimated bytes, for tests and diagnostics.
    var usage: (entries: Int, bytes: Int) {
        var entries = 0, bytes = 0
        for s in shards {
            s.lock.lock()
            entries += s.cache.count
            bytes += s.cache.bytes
            s.lock.unlock()
        }
        return (entries, bytes)
    }
}
