import OptimistThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a restore's fold on a thread of its own: the reader hands it chunks of live mutations
/// in order (``hand(_:)``), it folds them one after another, and ``finish()`` waits for the
/// last. The engine is touched by the folding thread alone until then; the chunks cross under
/// the monitor. Without a thread (none could be started) each chunk is folded as it is handed.
final class ChunkFolder {
    /// Mutations per chunk: the hand-over (a lock and a wake-up) costs nothing per mutation,
    /// and the fold starts soon after the reading.
    static let chunkSize = 4096

    private let monitor = Monitor()
    private var chunks: [[LiveMutation]] = []
    private var done = false
    private var failure: OptimistError?
    private var thread: pthread_t?
    private let fold: ([LiveMutation]) throws(OptimistError) -> Void

    init(_ fold: @escaping ([LiveMutation]) throws(OptimistError) -> Void) {
        self.fold = fold
        thread = startThread { [self] in run() }
    }

    /// Queues `chunk`; false once the fold failed (the reader should stop).
    func hand(_ chunk: [LiveMutation]) -> Bool {
        guard thread != nil else {
            guard failure == nil else { return false }
            do { try fold(chunk) } catch { failure = error }
            return failure == nil
        }
        return monitor.locked {
            guard failure == nil else { return false }
            chunks.append(chunk)
            monitor.broadcast()
            return true
        }
    }

    /// Waits for every chunk handed so far to be folded.
    ///
    /// - Throws: what the fold threw (the rest of the chunks were then dropped).
    func finish() throws(OptimistError) {
        if let t = thread {
            monitor.locked { done = true; monitor.broadcast() }
            pthread_join(t, nil)
            thread = nil
        }
        if let failure { throw failure }
    }

    private func run() {
        while true {
            monitor.lock()
            while chunks.isEmpty && !done { monitor.wait() }
            if chunks.isEmpty { monitor.unlock(); return }
            let chunk = chunks.removeFirst()
            monitor.unlock()
            do { try fold(chunk) } catch {
                monitor.locked { failure = error; chunks = [] }
                return
            }
        }
    }
}
