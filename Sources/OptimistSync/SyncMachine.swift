import OptimistCore
import OptimistModel
import OptimistProtocol

/// The sync's rules, one step at a time, with time passed in: no threads and no clock of its
/// own, so tests drive it deterministically with a scripted transport. ``SyncRunner`` runs it
/// on a thread.
///
/// A step does one exchange with the server (a push or a pull) or says when to come back:
/// - push first: the due front of the outbox, in send order, at most `maxBatch`;
/// - then pull: at start, after a push round that settled something, on `syncNow`, on a poke
///   of the event stream, every `pullIntervalMs` while no stream is live, and again at once
///   while the server says `more`;
/// - a failed exchange backs off (exponential, jittered, capped; `Retry-After` honoured);
///   401/403 pauses until new headers;
/// - a push refused whole for its content (400, 413, 422) is narrowed: sent again at once in
///   halves, down to one mutation, and one mutation refused that way ends `rejected` with the
///   server's reason, so no mutation can stop the ones behind it.
package final class SyncMachine {
    package struct Wait: Equatable {
        /// Come back at this time (ms) at the latest; nil: only when woken.
        package var until: Int64?
    }

    private let store: Store
    private let clientID: String
    private let transport: any SyncTransport
    package private(set) var options: SyncOptions

    package private(set) var state: SyncState = .idle
    package private(set) var lastError: String?
    package private(set) var pushed = 0
    package private(set) var pulled = 0

    private var needPull = true
    /// Pull before the next push: at start, and after a push whose answer was lost, so a
    /// pull's `outcomes` end what the server already applied instead of sending it again.
    private var resolveFirst = true
    private var nextPullAt: Int64 = .min
    private var backoffUntil: Int64 = .min
    private var failures = 0
    private var paused = false
    /// Push rounds that settled something, and the count a completed pull had seen when it
    /// started: equal once a pull has completed after the last push.
    private var pushRounds = 0
    private var pulledAfterRound = -1
    /// The most mutations the next push carries: `maxBatch`, halved after a push refused
    /// for its content (``narrows(_:)``), doubled back after each push answered.
    private var batchLimit: Int
    /// Ids sent without an answer naming them, and every mutation queued when the sync
    /// started (a previous process may have sent them): the pull's `unacked` candidates.
    private var maybeSent = Set<MutationID>()
    private var jitterState: UInt64
    /// Called when an exchange begins (the state is `pushing` or `pulling`).
    package var willExchange: (() -> Void)?
    /// The time after an exchange, so the pull interval counts from a pull's end (nil: the
    /// step's `now`, as in tests).
    package var clock: (() -> Int64)?
    /// The event stream is live: its pokes say when to pull, so the interval does not.
    package var streamLive = false

    package init(store: Store, transport: any SyncTransport, options: SyncOptions, seed: UInt64) {
        self.store = store
        self.clientID = store.clientID
        self.transport = transport
        self.options = options
        batchLimit = options.maxBatch
        jitterState = seed | 1
    }

    /// Takes over the outbox: once the sync is attached (so no other sync can be doing it),
    /// before the first step.
    package func begin() throws(OptimistError) {
        try store.syncRequeueInflight()
        for m in try store.syncQueued(limit: options.maxUnacked) { maybeSent.insert(m.id) }
    }

    // MARK: Controls

    /// The app's "online again": pull and push at once, forgetting any backoff.
    package func wakeNow() {
        needPull = true
        backoffUntil = .min
        failures = 0
    }

    /// The server poked the event stream: pull, after any wait the server asked for (unlike
    /// ``wakeNow()``, a poke must not defeat a `Retry-After`) and not while `unauthorized`.
    package func requestPull() {
        needPull = true
    }

    /// The event stream was refused (HTTP 401 or 403): pause as a refused push or pull does,
    /// until new headers.
    package func streamRefused(_ reason: String) {
        paused = true
        state = .unauthorized
        lastError = reason
    }

    /// New headers: replaces the old ones and lifts an `unauthorized` pause.
    package func setHeaders(_ headers: [SyncHeader]) {
        options.headers = headers
        if paused {
            paused = false
            backoffUntil = .min
        }
    }

    /// The status as of now (counts read from the store).
    package func status() -> SyncStatus {
        let counts = (try? store.outboxCounts()) ?? OutboxCounts()
        return SyncStatus(state: state, lastError: lastError, pending: counts.pending, inflight: counts.inflight,
                          failed: counts.failed, cursor: try? store.syncCursor(), pushed: pushed, pulled: pulled)
    }

    /// Nothing pending or inflight (failed ones excepted), and a pull completed after the
    /// last push round.
    package func isIdle() -> Bool {
        guard let counts = try? store.outboxCounts() else { return false }
        return counts.pending == 0 && counts.inflight == 0 && pulledAfterRound == pushRounds && !needPull
    }

    // MARK: Step

    /// Does one exchange and returns nil, or returns when to come back.
    package func step(now: Int64, cancelled: @escaping @Sendable () -> Bool = { false }) -> Wait? {
        if paused { return Wait(until: nil) }
        if now < backoffUntil { return Wait(until: backoffUntil) }
        do {
            if resolveFirst {
                try pull(now: now, cancelled: cancelled)
                return nil
            }
            let batch = try store.syncTake(max: batchLimit, now: now)
            if !batch.isEmpty {
                push(batch, now: now, cancelled: cancelled)
                return nil
            }
            let polling = options.pullIntervalMs > 0 && !streamLive
            if needPull || (polling && now >= nextPullAt) {
                try pull(now: now, cancelled: cancelled)
                return nil
            }
            if state == .pushing || state == .pulling { state = .idle }
            let counts = try store.outboxCounts()
            var until: Int64? = counts.nextDueAt.map { max($0, now) }
            if polling { until = min(until ?? .max, nextPullAt) }
            return Wait(until: until)
        } catch {
            // The store refused (closed, or its disk failed): say so and try again later.
            fail(.error, "store: \(error.message)", now: now, retryAfterMs: nil)
            return Wait(until: backoffUntil)
        }
    }

    // MARK: Push

    private func push(_ batch: [MutationRecord], now: Int64, cancelled: @escaping @Sendable () -> Bool) {
        state = .pushing
        willExchange?()
        let ids = batch.map(\.id)
        for id in ids { maybeSent.insert(id) }
        let request = PushRequest(clientID: clientID,
                                  mutations: batch.map { PushedMutation(id: $0.id, retry: $0.retry, ops: $0.ops) })
        let reply = send(.push, request.encoded(), cancelled)
        let later = now  // failures back off from the time the step began
        func giveBack() { try? store.syncUnsend(ids) }
        switch reply {
        case .unreachable(let why):
            giveBack()
            resolveFirst = true
            fail(.offline, "push: \(why)", now: later, retryAfterMs: nil)
        case .http(let status, let body, let retryAfter):
            guard status == 200 else {
                if Self.narrows(status) { return narrow(batch, status, body, now: later) }
                giveBack()
                if status >= 500 { resolveFirst = true }  // it may have applied before failing
                httpFailure("push", status, body, retryAfter, now: later)
                return
            }
            let results: [PushResult]
            do throws(ProtocolViolation) {
                try checkSize(body)
                results = try PushReply.decode(body, sent: ids).results
            } catch {
                giveBack()
                fail(.error, "push: \(error.message)", now: later, retryAfterMs: nil)
                return
            }
            do {
                try store.syncSettle(results, now: later)
            } catch {
                giveBack()
                fail(.error, "push: store: \(error.message)", now: later, retryAfterMs: nil)
                return
            }
            let answered = Set(results.map(\.id))
            for id in answered { maybeSent.remove(id) }
            giveBack()  // the ones the reply left out were not processed
            guard !results.isEmpty else {
                fail(.backoff, "push: the server processed none of \(ids.count) mutations", now: later, retryAfterMs: nil)
                return
            }
            pushed += results.reduce(0) { n, r in if case .ok = r.outcome { n + 1 } else { n } }
            if results.contains(where: { if case .retry = $0.outcome { false } else { true } }) {
                pushRounds += 1
                needPull = true
            }
            succeeded()
            batchLimit = min(options.maxBatch, batchLimit * 2)
        }
    }

    // MARK: Narrowing

    /// Whether a push refused whole with `status` is narrowed: the statuses that blame the
    /// request's content (400 Bad Request, 413 Content Too Large, 422 Unprocessable Content),
    /// which one mutation can cause. The other 4xx blame what every request shares (404, 405
    /// and 410 the URL, 415 and 431 the headers, 401 and 403 the credentials) or ask to wait
    /// (408, 429): narrowing those would reject every mutation for a mistake in the setup,
    /// so they keep the state `error` (or `unauthorized`, or the backoff) and lose nothing.
    static func narrows(_ status: Int) -> Bool { status == 400 || status == 413 || status == 422 }

    /// A push refused whole for its content: several mutations go back to the queue and the
    /// next push carries half as many, at once (the refusal is an answer, not an outage, so
    /// no backoff); one mutation alone ends `rejected` with the server's reason, as if the
    /// server had answered so (its policy decides, ``Store/syncSettle(_:now:)``), and the
    /// sync goes on with the rest. The server applied nothing of the request.
    private func narrow(_ batch: [MutationRecord], _ status: Int, _ body: String, now: Int64) {
        let ids = batch.map(\.id)
        let detail = "push: HTTP \(status)\(Self.errorText(body).map { ": \($0)" } ?? "")"
        guard ids.count == 1 else {
            try? store.syncUnsend(ids)
            batchLimit = max(1, ids.count / 2)
            lastError = detail
            return
        }
        let reason = Self.errorText(body) ?? "HTTP \(status)"
        do {
            try store.syncSettle([PushResult(id: ids[0], outcome: .rejected(error: reason))], now: now)
        } catch {
            try? store.syncUnsend(ids)
            fail(.error, "push: store: \(error.message)", now: now, retryAfterMs: nil)
            return
        }
        maybeSent.remove(ids[0])
        pushRounds += 1
        needPull = true
        succeeded()
        batchLimit = min(options.maxBatch, batchLimit * 2)
    }

    // MARK: Pull

    private func pull(now: Int64, cancelled: @escaping @Sendable () -> Bool) throws(OptimistError) {
        state = .pulling
        willExchange?()
        let round = pushRounds
        // Queued mutations that may have reached the server without us hearing back, with the
        // retry count each would be sent with now.
        var retries = [MutationID: Int]()
        var opsOf = [MutationID: [Op]]()
        for m in try store.syncQueued(limit: .max) where maybeSent.contains(m.id) {
            retries[m.id] = m.retry
            opsOf[m.id] = m.ops
            if retries.count == options.maxUnacked { break }
        }
        let unacked = retries.keys.sorted()
        // Each unacked id with the digest of its ops, so a server that recorded the id with
        // other ops (a copied or restored store file) says so instead of answering `ok`.
        let digests = unacked.map { OpsDigest.of(opsOf[$0] ?? []) }
        // A round in progress goes on from its last staged page.
        let body = PullRequest(clientID: clientID, cursor: try store.syncPullCursor(), unacked: unacked, digests: digests).encoded()
        switch send(.pull, body, cancelled) {
        case .unreachable(let why):
            fail(.offline, "pull: \(why)", now: now, retryAfterMs: nil)
        case .http(let status, let body, let retryAfter):
            guard status == 200 else {
                httpFailure("pull", status, body, retryAfter, now: now)
                return
            }
            let reply: PullReply
            do throws(ProtocolViolation) {
                try checkSize(body)
                reply = try PullReply.decode(body)
            } catch {
                fail(.error, "pull: \(error.message)", now: now, retryAfterMs: nil)
                return
            }
            // Only outcomes of ids we asked about, and not of an earlier send than the one
            // queued now (a retried mutation's old rejection says nothing of its new try).
            // Outcomes come with the round's last page; a page that more follow is only staged,
            // so any it carried wait for the next pull, which asks again.
            let outcomes = reply.more ? [] : reply.outcomes.filter { o in
                guard let current = retries[o.id] else { return false }
                if let r = o.retry, r < current { return false }
                return true
            }
            do {
                // Spaces the user no longer sees: deletes of their records (`S/…`, members
                // included) before the page's changes, so the drop takes the page's path (staged
                // or applied, heard with cause `server`), removes what an earlier page of the
                // round staged, and leaves what this page sends of the space again.
                var changes = reply.changes
                if !reply.drop.isEmpty {
                    changes = try store.syncDropDeletes(prefixes: reply.drop.map { Key($0 + "/") }) + changes
                }
                // A page that more follow is staged; the round's last page applies them all at
                // once (see ``Store/syncApplyPull(changes:outcomes:cursor:more:reset:)``).
                try store.syncApplyPull(changes: changes, outcomes: outcomes, cursor: reply.cursor,
                                        more: reply.more, reset: reply.reset)
            } catch {
                fail(.error, "pull: \(error.message)", now: now, retryAfterMs: nil)
                return
            }
            for o in outcomes { maybeSent.remove(o.id) }
            pulled += reply.changes.count
            needPull = reply.more
            resolveFirst = reply.more
            if !reply.more {
                pulledAfterRound = round
                let end = clock?() ?? now
                nextPullAt = end.addingReportingOverflow(options.pullIntervalMs).overflow ? .max : end + options.pullIntervalMs
            }
            succeeded()
        }
    }

    // MARK: Failures

    private func checkSize(_ body: String) throws(ProtocolViolation) {
        guard body.utf8.count <= options.maxResponseBytes else {
            throw ProtocolViolation("the reply has \(body.utf8.count) bytes, over the limit of \(options.maxResponseBytes)")
        }
    }

    private func send(_ endpoint: SyncEndpoint, _ body: String, _ cancelled: @escaping @Sendable () -> Bool) -> SyncReply {
        let url = options.url.map { "\($0)/\(endpoint.rawValue)" } ?? ""
        let request = SyncRequest(endpoint: endpoint, url: url, body: body, headers: options.headers, timeoutMs: options.timeoutMs)
        return transport.send(request, cancelled: cancelled)
    }

    private func httpFailure(_ what: String, _ status: Int, _ body: String, _ retryAfter: Int64?, now: Int64) {
        let detail = "\(what): HTTP \(status)\(Self.errorText(body).map { ": \($0)" } ?? "")"
        switch status {
        case 401, 403:
            paused = true
            state = .unauthorized
            lastError = detail
        case 429, 500...599:
            fail(.backoff, detail, now: now, retryAfterMs: retryAfter)
        default:
            fail(.error, detail, now: now, retryAfterMs: retryAfter)
        }
    }

    /// The `error` member of a JSON error body, or the start of any other body.
    static func errorText(_ body: String) -> String? {
        if case .object(let o)? = try? JSONParser.parse(body), case .string(let e)? = o["error"] { return e }
        let trimmed = body.utf8.prefix(200)
        return trimmed.isEmpty ? nil : String(decoding: trimmed, as: UTF8.self)
    }

    private func fail(_ newState: SyncState, _ message: String, now: Int64, retryAfterMs: Int64?) {
        failures += 1
        state = newState
        lastError = message
        let shift = Int64(min(failures - 1, 30))
        let full = min(options.backoffMaxMs, options.backoffBaseMs << shift)
        // Equal jitter: half the delay, plus a random part of the other half.
        jitterState ^= jitterState << 13
        jitterState ^= jitterState >> 7
        jitterState ^= jitterState << 17
        let half = full / 2
        var wait = half + Int64(jitterState % UInt64(full - half + 1))
        if let r = retryAfterMs { wait = max(wait, min(r, SyncOptions.maxBackoffMs)) }
        let until = now.addingReportingOverflow(wait)
        backoffUntil = until.overflow ? .max : until.partialValue
    }

    private func succeeded() {
        failures = 0
        lastError = nil
        state = .idle
    }
}
