import OptimistCore
import OptimistModel
import OptimistThreads
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a ``SyncMachine`` on a thread of its own, attached to its store.
///
/// The thread steps the machine while there is work and sleeps on a condition variable until
/// the machine's next time, a queued mutation (``storeDidQueue()``), `syncNow`, new headers,
/// news from the event stream or `stop`. The machine is touched by that thread only; other
/// threads hand it requests through the monitor. State listeners are called on the sync
/// thread, outside every lock.
///
/// With ``SyncOptions/events`` and a transport that is a ``SyncEventSource``, an
/// ``EventStream`` runs beside it on a thread of its own: its pokes ask for a pull, its state
/// joins the status, and its 401 pauses the sync. The sync's thread stops and joins it before
/// it ends.
package final class SyncRunner: StoreAttachment, @unchecked Sendable {
    private let store: Store
    private let machine: SyncMachine
    private let clock: @Sendable () -> Int64
    private let monitor = Monitor()
    private let stopping = Atomic<Bool>(false)
    /// The sync's thread until someone joins it (a stop or close from another thread), or it
    /// detaches itself (it was stopped from its own callbacks and nobody waited).
    private var thread: pthread_t?
    private var selfStopped = false
    /// The event stream, when the options and the transport allow one.
    private let stream: EventStream?

    // Guarded by `monitor`.
    private var woken = false
    /// Counts ``storeDidQueue()`` calls: an idle verdict computed before a mutation was queued
    /// must not overwrite the "not idle" that mutation set.
    private var queued: UInt64 = 0
    private var nowRequested = false
    private var newHeaders: [SyncHeader]?
    private var finished = false
    /// The final status is published (the thread is about to end).
    private var stoppedState = false
    private var idle = false
    private var last: SyncStatus
    private var listeners: [UInt64: @Sendable (SyncStatus) -> Void] = [:]
    private var nextListener: UInt64 = 1
    private var streamState: SyncStreamState
    /// The stream's news for the sync's thread: a poke, a refusal, a new state.
    private var poked = false
    private var streamRefusal: String?
    private var streamChanged = false

    /// Attaches a sync to `store` and starts its thread.
    ///
    /// - Throws: `.misuse` when a sync already runs on the store, or the options are bad.
    package static func start(store: Store, options: SyncOptions, transport: any SyncTransport,
                              clock: @escaping @Sendable () -> Int64 = monotonicMilliseconds) throws(OptimistError) -> SyncRunner {
        let options = try options.validated()
        var g = SystemRandomNumberGenerator()
        let stream = (options.events ? transport as? any SyncEventSource : nil).map { source in
            EventStream(source: source, url: options.url.map { "\($0)/events" } ?? "", headers: options.headers,
                        connectTimeoutMs: options.timeoutMs, seed: g.next())
        }
        let runner = SyncRunner(store: store, machine: SyncMachine(store: store, transport: transport, options: options, seed: g.next()),
                                stream: stream, clock: clock)
        // Before the thread starts, so the listener hears every status from the first.
        if let f = options.onStatus { _ = runner.addListener(f) }
        try store.attach(runner)
        do {
            try runner.machine.begin()
        } catch {
            store.detach(runner)
            throw error
        }
        // Created under the monitor: the thread's first step takes it, so `thread` is set before
        // any callback of the thread can ask whether it is on the sync's thread.
        let started = runner.monitor.locked { () -> Bool in
            runner.thread = startThread({ runner.run() })
            return runner.thread != nil
        }
        guard started else {
            store.detach(runner)
            throw .internal("cannot start the sync thread")
        }
        // After the sync's thread, which joins it when it ends (a stop that came first makes
        // the start a no-op). Without its thread the sync just polls.
        if let stream, !stream.start(runner.streamHandlers()) {
            runner.streamDidChange(.off)
        }
        return runner
    }

    private init(store: Store, machine: SyncMachine, stream: EventStream?, clock: @escaping @Sendable () -> Int64) {
        self.store = store
        self.machine = machine
        self.stream = stream
        self.clock = clock
        streamState = stream == nil ? .off : .connecting
        last = machine.status()
        last.stream = streamState
        // `pushing` and `pulling` are published as an exchange begins, not only after it.
        machine.willExchange = { [unowned self] in self.publish(idle: false) }
        machine.clock = clock
    }

    // MARK: Controls (any thread)

    package func storeDidQueue() {
        monitor.locked {
            woken = true
            idle = false
            queued &+= 1
            monitor.broadcast()
        }
    }

    package func storeWillClose() { stop() }

    /// Pull and push at once, forgetting any backoff; the event stream's too.
    package func syncNow() {
        monitor.locked {
            nowRequested = true
            idle = false
            monitor.broadcast()
        }
        stream?.wake()
    }

    /// Replaces the headers sent with every request (the event stream's next connection's
    /// too); lifts an `unauthorized` pause.
    package func setHeaders(_ headers: [SyncHeader]) throws(OptimistError) {
        for h in headers { try SyncHeader.check(h) }
        // The stream's first: a refusal it reports for the old headers then reaches the
        // monitor before the new headers do, and they lift it (see EventStream.Handlers).
        stream?.setHeaders(headers)
        monitor.locked {
            newHeaders = headers
            monitor.broadcast()
        }
    }

    /// Stops the thread (an exchange in progress is cancelled through the transport's
    /// `cancelled`) and detaches from the store; returns once the thread will call nothing of
    /// the host's any more (no transport, no listener). Idempotent. From the sync's own thread
    /// (a listener or transport stopping it) it asks the thread to stop and returns at once;
    /// the thread ends after that callback, and a stop or close from elsewhere still waits
    /// for it.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        let toJoin: pthread_t? = monitor.locked {
            monitor.broadcast()
            if let t = thread, pthread_equal(t, pthread_self()) != 0 {
                selfStopped = true
                return nil
            }
            while !finished { monitor.wait() }
            defer { thread = nil }
            return thread
        }
        // The join also tells thread checkers that everything the thread did happened before.
        if let t = toJoin { joinThread(t) }
        store.detach(self)
    }

    /// True once nothing is pending or inflight (failed ones excepted) and a pull has
    /// completed after the last push; false when `timeoutMs` passes first or the sync stops.
    package func waitIdle(timeoutMs: Int64) -> Bool {
        let deadline = monotonicMilliseconds() + min(max(0, timeoutMs), Int64(1) << 50)
        return monitor.locked {
            while true {
                if idle { return true }
                if finished || stoppedState { return false }
                let left = deadline - monotonicMilliseconds()
                if left <= 0 { return false }
                monitor.wait(milliseconds: Int(min(left, 1_000)))
            }
        }
    }

    /// The status now: the last step's state and counters, the store's current counts, the
    /// stream's state.
    package var status: SyncStatus {
        var s = monitor.locked { () -> SyncStatus in
            var s = last
            s.stream = streamState
            return s
        }
        if let counts = try? store.outboxCounts() {
            s.pending = counts.pending
            s.inflight = counts.inflight
            s.failed = counts.failed
        }
        s.cursor = (try? store.syncCursor()) ?? s.cursor
        return s
    }

    /// Calls `listener` on the sync thread with each new status (state, error or counters).
    package func addListener(_ listener: @escaping @Sendable (SyncStatus) -> Void) -> UInt64 {
        monitor.locked {
            let id = nextListener
            nextListener += 1
            listeners[id] = listener
            return id
        }
    }

    package func removeListener(_ id: UInt64) {
        monitor.locked { _ = listeners.removeValue(forKey: id) }
    }

    // MARK: The event stream (its thread)

    private func streamHandlers() -> EventStream.Handlers {
        // Unowned: the sync's thread, which holds the runner, joins the stream's thread first.
        EventStream.Handlers(
            onPoke: { [unowned self] in
                monitor.locked {
                    poked = true
                    idle = false
                    monitor.broadcast()
                }
            },
            onState: { [unowned self] in streamDidChange($0) },
            onRefused: { [unowned self] reason in
                monitor.locked {
                    streamRefusal = reason
                    monitor.broadcast()
                }
            })
    }

    /// The stream's new state, published by the sync's thread (listeners are called there).
    private func streamDidChange(_ state: SyncStreamState) {
        monitor.locked {
            streamState = state
            streamChanged = true
            monitor.broadcast()
        }
    }

    // MARK: The thread

    private func run() {
        let isStopping: @Sendable () -> Bool = { [self] in stopping.load(ordering: .acquiring) }
        while !isStopping() {
            let (now, headers, poke, refusal, live) = monitor.locked { () -> (Bool, [SyncHeader]?, Bool, String?, Bool) in
                defer {
                    woken = false
                    nowRequested = false
                    newHeaders = nil
                    poked = false
                    streamRefusal = nil
                    streamChanged = false
                }
                return (nowRequested, newHeaders, poked, streamRefusal, streamState == .live)
            }
            if now { machine.wakeNow() }
            if poke { machine.requestPull() }
            // Before the headers: headers set after the refusal lift it.
            if let refusal { machine.streamRefused(refusal) }
            if let headers { machine.setHeaders(headers) }
            machine.streamLive = live

            let wait = machine.step(now: clock(), cancelled: isStopping)
            // Idle after any step: a pull slower than the pull interval is followed by another
            // at once, and the sync is still idle between them.
            let generation = monitor.locked { queued }
            publish(idle: machine.isIdle(), ifQueued: generation)
            guard let wait else { continue }
            monitor.locked {
                guard !woken && !nowRequested && newHeaders == nil && !poked && streamRefusal == nil && !streamChanged
                      && !isStopping() else { return }
                if let until = wait.until {
                    let ms = until - clock()
                    if ms > 0 { monitor.wait(milliseconds: Int(min(ms, 60_000))) }
                } else {
                    monitor.wait()
                }
            }
        }
        // Before the last status: no stream handler runs after it.
        stream?.stop()
        var final = machine.status()
        final.state = .stopped
        final.stream = .off
        let calls: [@Sendable (SyncStatus) -> Void] = monitor.locked {
            streamState = .off
            stoppedState = true
            idle = false
            last = final
            monitor.broadcast()
            return Array(listeners.values)
        }
        for f in calls { f(final) }
        // Only now, after the last callback: waiting stops may return, and the store is free
        // for another sync.
        store.detach(self)
        monitor.locked {
            finished = true
            // Stopped from its own callbacks with nobody waiting: nobody will join it.
            if selfStopped, let t = thread {
                pthread_detach(t)
                thread = nil
            }
            monitor.broadcast()
        }
    }

    /// Records the machine's status for readers and tells the listeners when it changed.
    private func publish(idle nowIdle: Bool, ifQueued generation: UInt64? = nil) {
        var s = machine.status()
        let calls: [@Sendable (SyncStatus) -> Void] = monitor.locked {
            s.stream = streamState
            if generation == nil || generation == queued { idle = nowIdle }
            if idle { monitor.broadcast() }
            guard s != last else { return [] }
            last = s
            monitor.broadcast()
            return listeners.sorted { $0.key < $1.key }.map(\.value)
        }
        for f in calls { f(s) }
    }
}
