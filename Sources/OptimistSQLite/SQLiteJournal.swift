import Synchronization
import OptimistCore
import OptimistModel
import OptimistThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal sink of a file-backed store: queues what the store appends and has a
/// background thread write it to SQLite in batches, one transaction per batch (group commit).
///
/// Sequence numbers tie `flush` to the writer: every `append` is numbered; the writer commits
/// everything queued so far and publishes the highest number it committed; `flush` waits until
/// the number taken at its start is committed with an fsync.
///
/// When a write fails (full disk, file made read-only), the batch stays queued (later entries
/// are folded onto it), the error is kept for ``takeError()`` (reported once, by the store's
/// next call), and the writer waits: a `flush` retries at once, otherwise it retries every
/// second. The in-memory store is unaffected, so its state stays consistent.
public final class SQLiteJournal: JournalSink, @unchecked Sendable {
    let state: WriterState
    private let thread: pthread_t

    init(writer: BatchWriter) throws(OptimistError) {
        let state = WriterState(writer: writer)
        guard let thread = startThread({ state.run() }) else {
            throw .io("cannot start the store's writer thread")
        }
        self.state = state
        self.thread = thread
    }

    /// A store dropped without `close` still writes what it queued, then releases the file.
    deinit { try? close() }

    package func append(_ entries: [JournalEntry], number: UInt64) { state.append(entries, number: number) }

    package func append(taking entries: inout [JournalEntry], number: UInt64) {
        state.append(taking: &entries, number: number)
    }

    public func flush() throws(OptimistError) { try state.flush() }

    public func takeError() -> OptimistError? { state.takeError() }

    public func close() throws(OptimistError) {
        guard let flushResult = state.beginClose() else { return }
        pthread_join(thread, nil)
        state.finishClose(clean: flushResult.isSuccess)
        if case .failure(let e) = flushResult { throw e }
    }

    /// Runs `body` holding the writer's connection, as a long commit does (for tests).
    package func holdingWriterConnection<R>(_ body: () throws -> R) rethrows -> R {
        try state.holdingConnection(body)
    }

    /// Caps the file at `pages` pages (nil: no cap), from the next batch on; writes beyond it
    /// fail with `.io` like a full disk. For quotas, and for tests of the full-disk path.
    public func limitPages(_ pages: Int?) { state.limitPages(pages) }
}

extension Result {
    var isSuccess: Bool { if case .success = self { return true }; return false }
}

/// What the store's threads and the writer thread share, guarded by `monitor`.
final class WriterState: @unchecked Sendable {
    // Stored properties are `@exclusivity(unchecked)`: ordered by the store's locks (see `Engine`).
    private let monitor = Monitor()
    // Shared (under `monitor`):
    /// Entries appended since the writer last took them, in order (in chunks: see
    /// ``EntryChunks``).
    @exclusivity(unchecked) private var queue = EntryChunks()
    /// Where in `queue` the latest `.mutation` entry of each mutation is. A mutation that ends
    /// before the writer took it (a tap and its commit or rollback, milliseconds apart) has
    /// that entry replaced by its `.ended` one: the writer would only have dropped it, and this
    /// way it never touches (so never moves between cores) the mutation's ops, which the
    /// appending thread then frees itself. On a file-backed store that halved a tap's cost.
    @exclusivity(unchecked) private var queuedMutation = QueuedMutations()
    /// Entries the writer has written, handed back so that the appending threads release them
    /// (a few per call). The objects in them were allocated by those threads: freeing them on
    /// the writer thread made every tap contend for malloc's arena lock and made glibc trim
    /// and re-fault the heap, which doubled the cost of a tap on a file-backed store.
    @exclusivity(unchecked) private var spent = EntryChunks()
    @exclusivity(unchecked) private var appended: UInt64 = 0
    @exclusivity(unchecked) private var committed: UInt64 = 0
    /// Mirrors `committed` (the number of the last append committed) for the store's record
    /// storage (``SQLiteStorage``), read without the monitor: it keeps a confirmed record in
    /// memory until the append it numbered for that record is committed.
    let committedCount = Atomic<UInt64>(0)
    @exclusivity(unchecked) private var synced: UInt64 = 0
    @exclusivity(unchecked) private var syncWanted: UInt64 = 0
    @exclusivity(unchecked) private var failures: UInt64 = 0
    @exclusivity(unchecked) private var lastError: OptimistError?
    private var unreported: OptimistError? {
        didSet { hasUnreported.store(unreported != nil, ordering: .releasing) }
    }
    /// Mirrors `unreported != nil` so the store's every call can check it without the lock.
    private let hasUnreported = Atomic<Bool>(false)
    @exclusivity(unchecked) private var stalled = false
    @exclusivity(unchecked) private var retryNow = false
    @exclusivity(unchecked) private var closing = false
    @exclusivity(unchecked) private var stopping = false
    @exclusivity(unchecked) private var closed = false
    @exclusivity(unchecked) private var pageLimit: Int?? = nil
    /// What ``discard(_:)`` handed over, freed by the writer thread (under `discardLock`).
    @exclusivity(unchecked) private var discarded: [Any] = []
    private let discardLock = Monitor()
    /// The file's place in ``OpenFiles`` (see ``releaseOnClose(_:)``).
    @exclusivity(unchecked) private var claim: OpenFiles.ID?
    /// The writer waits for work (appends must wake it).
    @exclusivity(unchecked) private var writerIdle = false
    /// The writer has already let the current burst gather (group commit).
    @exclusivity(unchecked) private var gathered = false
    // The writer thread's own (the opener's before the thread starts, the closer's after it ends):
    @exclusivity(unchecked) private var writer: BatchWriter?
    @exclusivity(unchecked) private var carry = JournalBatch()
    /// What the writer took from `queue` for the batch it writes.
    @exclusivity(unchecked) private var taken = EntryChunks()

    /// How long a batch nobody waits for may gather more calls before it is written.
    static let gatherMilliseconds = 2

    init(writer: BatchWriter) { self.writer = writer }

    func append(_ entries: [JournalEntry], number: UInt64) {
        appending(count: entries.count, number: number) { for e in entries { enqueue(e) } }
    }

    /// Moves `entries` to the queue (see ``JournalSink/append(taking:number:)``).
    func append(taking entries: inout [JournalEntry], number: UInt64) {
        // Taken from the end, each entry is moved, not copied and released; reversed first
        // to keep their order, in the buffer (which moves them; Array's own reverse copies).
        if entries.count > 1 { entries.withUnsafeMutableBufferPointer { $0.reverse() } }
        appending(count: entries.count, number: number) { while let e = entries.popLast() { enqueue(e) } }
    }

    /// Runs `enqueueAll` (which enqueues `count` entries of append `number`) under the
    /// monitor, waking the writer when it needs to be.
    private func appending(count: Int, number: UInt64, _ enqueueAll: () -> Void) {
        monitor.locked {
            // Wake the writer only when it sleeps with nothing to do: a wake-up per call cost
            // the caller a futex call and set the writer competing for the core on every mutate.
            let wake = queue.isEmpty && writerIdle && !stalled
            enqueueAll()
            // Numbers come from the store's storage, one per append, in order: the writer's
            // commits and `flush` count in them.
            assert(number > appended, "journal appends must be numbered in increasing order")
            appended = number
            if !spent.isEmpty { spent.removeLast(min(spent.count, count + 2)) }
            if wake { monitor.broadcast() }
        }
    }

    /// Queues one entry (under the monitor). An ended mutation whose own entry is still queued
    /// takes that entry's place: the same net effect, as later entries never name its id.
    @inline(__always) private func enqueue(_ e: consuming JournalEntry) {
        switch e {
        case .mutation(let m):
            queuedMutation.set(m.id, at: queue.count)
        case .ended(let id, _):
            if let at = queuedMutation.take(id) {
                queue[at] = e
                return
            }
        default: break
        }
        queue.append(e)
    }

    /// How many written entries wait to be freed (for tests).
    var spentCount: Int { monitor.locked { spent.count } }

    func takeError() -> OptimistError? {
        guard hasUnreported.load(ordering: .acquiring) else { return nil }
        return monitor.locked {
            defer { unreported = nil }
            return unreported
        }
    }

    func limitPages(_ pages: Int?) {
        monitor.locked {
            pageLimit = .some(pages)
            retryNow = true
            monitor.broadcast()
        }
    }

    func flush() throws(OptimistError) {
        // What the writer has written is freed here, by the flushing thread, outside the
        // monitor: a flush waits for the disk anyway. Left in `spent`, a bulk load's entries
        // (one per record: 100k after a 100k-record apply) went a few per later call, and the
        // taps after it each paid cache misses freeing cold records.
        var written = EntryChunks()
        defer { withExtendedLifetime(written) {} }
        monitor.lock()
        defer { monitor.unlock() }
        let target = appended
        if synced < target {
            guard !closed && !stopping else { throw .misuse("the store is closed") }
            syncWanted = max(syncWanted, target)
            retryNow = true
            let failuresBefore = failures
            monitor.broadcast()
            while synced < target {
                if failures != failuresBefore {
                    unreported = nil
                    throw lastError ?? .io("write failed")
                }
                monitor.wait()
            }
        }
        swap(&written, &spent)
    }

    /// Flushes and tells the writer to stop; nil when another close got here first.
    func beginClose() -> Result<Void, OptimistError>? {
        let claimed = monitor.locked { () -> Bool in
            defer { closing = true }
            return !closing
        }
        guard claimed else { return nil }
        let result: Result<Void, OptimistError>
        do throws(OptimistError) { try flush(); result = .success(()) } catch { result = .failure(error) }
        monitor.locked {
            stopping = true
            monitor.broadcast()
        }
        return result
    }

    /// After the writer thread ended: marks the file closed cleanly when everything was
    /// written, then releases the statements and the file.
    func finishClose(clean: Bool) {
        monitor.locked { closed = true }
        if clean { try? writer?.markClosed() }
        let connection = writer?.connection
        writer = nil
        connection?.close()
        let id = monitor.locked { () -> OpenFiles.ID? in
            let id = claim
            claim = nil
            return id
        }
        if let id { OpenFiles.release(id) }
    }

    func holdingConnection<R>(_ body: () throws -> R) rethrows -> R {
        guard let c = monitor.locked({ writer?.connection }) else { return try body() }
        return try c.gate.locked(body)
    }

    /// Hands `garbage` to the writer thread to free: the store's records let go once written
    /// (see ``SQLiteStorage``), which cost the store call that freed them milliseconds beside
    /// a big batch, and the room of a table that held 100k of them (milliseconds, most of it
    /// the system taking the pages back). The writer thread is in no caller's way.
    ///
    /// Not under ``monitor``, which an append of a big batch holds for a while, and without
    /// waking the writer: it frees what it was handed after its next batch (a store that is
    /// only read from meanwhile keeps it until then, or until it closes).
    func discard(_ garbage: Any) {
        discardLock.locked { discarded.append(garbage) }
    }

    /// Hands over the file's place in ``OpenFiles``, let go once the connection is closed.
    func releaseOnClose(_ id: OpenFiles.ID) { monitor.locked { claim = id } }

    /// The writer thread's loop.
    func run() {
        monitor.lock()
        while !stopping {
            let hasWork = !queue.isEmpty || !carry.isEmpty || syncWanted > synced || pageLimit != nil
            if !hasWork {
                writerIdle = true
                monitor.wait()
                writerIdle = false
                continue
            }
            // Group commit: when nobody waits for this batch, let the burst it belongs to gather
            // for a moment so one transaction carries many calls. A flush or close ends the wait.
            if !gathered && syncWanted <= synced && pageLimit == nil && !stalled {
                gathered = true
                monitor.wait(milliseconds: Self.gatherMilliseconds)
                continue
            }
            gathered = false
            if stalled && !retryNow {
                monitor.wait(milliseconds: 1000)
                retryNow = true
                continue
            }
            swap(&queue, &taken)
            queuedMutation.removeAll()
            let upTo = appended
            let sync = syncWanted > synced
            let limit = pageLimit
            pageLimit = nil
            retryNow = false
            monitor.unlock()

            carry.fold(taken)
            var failure: OptimistError?
            do throws(OptimistError) {
                if let limit { try writer!.limitPages(limit) }
                if !carry.isEmpty || sync { try writer!.write(carry, sync: sync) }
            } catch {
                failure = error
            }
            var garbage: [Any] = []
            discardLock.locked { swap(&garbage, &discarded) }
            garbage.removeAll()  // freed here, in no caller's way

            // A block's entries are handed back one by one (its array becomes a chunk, here,
            // outside the monitor): freed whole, a staged batch's would have cost one tap's
            // append (which frees a few spent entries) milliseconds.
            if taken.contains(where: { if case .block = $0 { true } else { false } }) {
                var opened = EntryChunks()
                for e in taken {
                    if case .block(let entries) = e { opened.append(chunk: entries) } else { opened.append(e) }
                }
                taken = opened
            }
            // The written batch is freed here, outside the monitor (`carry` is this thread's):
            // letting go of a 100k-record server batch takes milliseconds, and under the
            // monitor a tap beside it waited that long for its append (`WRITERS_RUSAGE=1` in
            // Benchmarks/C/writers.c: one sleep, no page faults; BENCHMARKS.md, "The write path,
            // round 2").
            if failure == nil { carry = JournalBatch() }
            monitor.lock()
            // Folded into `carry` (kept on failure), so `taken` is done with either way.
            spent.append(contentsOf: taken)
            taken = EntryChunks()
            if let failure {
                let e = OptimistError.io("writing the store file failed: \(failure.message)")
                failures += 1
                lastError = e
                if !stalled { unreported = e }
                stalled = true
            } else {
                committed = upTo
                committedCount.store(upTo, ordering: .releasing)
                if sync { synced = upTo }
                stalled = false
            }
            monitor.broadcast()
        }
        monitor.unlock()
    }
}
