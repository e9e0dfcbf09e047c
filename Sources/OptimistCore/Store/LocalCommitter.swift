#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OptimistModel
import OptimistThreads

/// The authority of a local-only store file: commits each mutation once the background writer
/// has it on disk, and rolls it back (or, under `.keep`, fails it) when the write fails.
///
/// A thread of its own, woken by each queued mutation (it is the store's attachment, as a
/// sync would be; a local-only store has none). A round takes the pending mutations, waits
/// for the file to hold them (the sink's flush), then commits them in one change; a flush
/// that fails settles them by their policy with the failure as their `lastError`. Mutations
/// made during a round are the next round's.
final class LocalCommitter: StoreAttachment, @unchecked Sendable {
    private let monitor = Monitor()
    private var wanted = false
    private var stopping = false
    private var thread: pthread_t?
    /// Unowned: the store holds its attachment, and closes (which stops this thread) before
    /// it goes.
    private unowned let store: Store

    init(store: Store) { self.store = store }

    func start() -> Bool {
        thread = startThread { [self] in run() }
        return thread != nil
    }

    func storeDidQueue() {
        monitor.locked {
            wanted = true
            monitor.broadcast()
        }
    }

    func storeWillClose() {
        let t: pthread_t? = monitor.locked {
            stopping = true
            monitor.broadcast()
            defer { thread = nil }
            return thread
        }
        if let t { joinThread(t) }
    }

    private func run() {
        while true {
            let go: Bool = monitor.locked {
                while !wanted && !stopping { monitor.wait() }
                wanted = false
                return !stopping
            }
            guard go else { return }
            // A failure here has settled what it could; a closed store ends the loop next.
            try? store.settleLocal()
        }
    }
}
