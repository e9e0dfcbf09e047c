import OptimistModel
import OptimistThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two halves of restoring a store file's mutations, on two threads at once (see
/// ``MutationStream``). A thread of its own reads the rows, a chunk at a time, and folds the
/// parsed chunks into the engine; the caller's thread parses each chunk of rows into live
/// mutations (``nextRows()``, then ``hand(_:rows:)``). The engine is touched by the folding
/// thread alone until ``finish()``; everything crosses under the monitor.
///
/// Why this split (a reopen with 100k pending, two cores): parsing is the biggest half and
/// allocates the records, most of the memory. On the caller's thread those allocations come
/// from its malloc arena, where a closed store's memory is found again; a new thread's arena
/// is given back to the system when freed, and filling it page by page again cost a page
/// fault per page, every open, when the parsing ran there. Reading the rows allocates
/// nothing (its buffers go round) and balances the fold against the parse.
///
/// Without a thread (none could be started) the caller does all three in turn.
package final class ChunkFolder {
    /// Mutations per chunk: the hand-over (a lock and a wake-up) costs nothing per mutation,
    /// and the parsing starts soon after the open.
    static let chunkSize = 4096
    /// Row buffers going round: one being read, one being parsed, one waiting.
    static let buffers = 3

    private let stream: any MutationStream
    /// Folds a chunk; given how many mutations the stream holds in all.
    private let fold: ([LiveMutation], Int) throws(OptimistError) -> Void

    private let monitor = Monitor()
    // Under the monitor:
    private var toParse: [StoredMutations] = []
    private var parsed: [(mutations: [LiveMutation], rows: StoredMutations)] = []
    /// No more rows will come to parse (all read, or the folding thread failed).
    private var readingEnded = false
    /// The caller stopped parsing (a row did not decode).
    private var stopped = false
    private var failure: OptimistError?

    private var thread: pthread_t?
    // The caller's own state when there is no thread.
    private var inlineCount: Int?
    private var inlineMore = true

    /// Set by tests to restore without the thread, as when none can be started.
    package static let threadless = Atomic<Bool>(false)

    init(_ stream: any MutationStream, fold: @escaping ([LiveMutation], Int) throws(OptimistError) -> Void) {
        self.stream = stream
        self.fold = fold
        if !Self.threadless.load(ordering: .relaxed) { thread = startThread { [self] in work() } }
    }

    /// The next rows to parse, or nil when there are no more (or the other half failed: then
    /// ``finish()`` throws why).
    func nextRows() -> StoredMutations? {
        guard thread != nil else { return readInline() }
        return monitor.locked {
            while toParse.isEmpty && !readingEnded { monitor.wait() }
            return toParse.isEmpty ? nil : toParse.removeFirst()
        }
    }

    /// Hands over the live mutations parsed from `rows`, and the emptied buffer.
    func hand(_ mutations: [LiveMutation], rows: StoredMutations) {
        guard thread != nil else {
            guard failure == nil, let n = inlineCount else { return }
            do { try fold(mutations, n) } catch { failure = error }
            return
        }
        monitor.locked {
            parsed.append((mutations, rows))
            monitor.broadcast()
        }
    }

    /// The caller stops parsing (a row did not decode): the folding thread ends.
    func stop() {
        monitor.locked { stopped = true; monitor.broadcast() }
    }

    /// Waits for every chunk handed so far to be folded.
    ///
    /// - Throws: what reading or folding threw.
    func finish() throws(OptimistError) {
        if let t = thread {
            pthread_join(t, nil)
            thread = nil
        }
        if let failure { throw failure }
    }

    // MARK: The folding thread

    private func work() {
        do throws(OptimistError) {
            let expected = try stream.count()
            var free = (0..<Self.buffers).map { _ in StoredMutations() }
            var more = true
            var out = 0  // buffers with the parser
            while true {
                // Read while a buffer is free, so the parser always has rows waiting.
                while more, var rows = free.popLast() {
                    more = try stream.readRows(into: &rows, limit: Self.chunkSize)
                    if rows.rows.isEmpty { free.append(rows); continue }
                    out += 1
                    monitor.locked { toParse.append(rows); monitor.broadcast() }
                }
                if !more { monitor.locked { readingEnded = true; monitor.broadcast() } }
                if out == 0 { return }
                let next: (mutations: [LiveMutation], rows: StoredMutations)? = monitor.locked {
                    while parsed.isEmpty && !stopped { monitor.wait() }
                    return parsed.isEmpty ? nil : parsed.removeFirst()
                }
                guard let next else { return }
                out -= 1
                free.append(next.rows)
                try fold(next.mutations, expected)
            }
        } catch {
            monitor.locked { failure = error; readingEnded = true; toParse = []; monitor.broadcast() }
        }
    }

    /// Without a thread: the next rows read on the caller's thread.
    private func readInline() -> StoredMutations? {
        guard failure == nil, inlineMore else { return nil }
        do throws(OptimistError) {
            if inlineCount == nil { inlineCount = try stream.count() }
            var rows = StoredMutations()
            inlineMore = try stream.readRows(into: &rows, limit: Self.chunkSize)
            return rows.rows.isEmpty ? nil : rows
        } catch {
            failure = error
            return nil
        }
    }
}
