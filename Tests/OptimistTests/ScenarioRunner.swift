import Foundation
import Optimist
import OptimistC

/// Runs one scenario file of `Tests/Scenarios` (format in its README) through the Swift API.
struct ScenarioRunner {
    struct Failure: Error, CustomStringConvertible {
        let line: Int
        let text: String
        let message: String
        var description: String { "line \(line): \(text)\n  \(message)" }
    }

    static let codes = ["OK": 0, "ERROR": 1, "MISUSE": 2, "NOTFOUND": 3, "STATE": 4, "INVALID": 5,
                        "DUPLICATE": 6, "IO": 7, "CORRUPT": 8, "BUSY": 9]

    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [JSON] = []
        func add(_ changes: [Change]) {
            lock.lock(); defer { lock.unlock() }
            for c in changes {
                items.append(.array([.string(c.collection.string), .string(c.key.string),
                                     c.value.map(JSON.object) ?? .null, .bool(c.pending), .string(c.cause.description),
                                     .string(c.status.description)]))
            }
        }
        func take() -> JSON {
            lock.lock(); defer { lock.unlock() }
            defer { items = [] }
            return .array(items)
        }
    }

    var store: Store
    let path: String?
    var ids: [String: MutationID] = [:]
    var subscriptions: [String: (id: UInt64, received: Received)] = [:]
    /// Live queries by name, with the deltas each received since the last `deltas`.
    var queries: [String: (query: LiveQuery, received: ReceivedDeltas)] = [:]

    final class ReceivedDeltas: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [JSON] = []
        func add(_ deltas: [QueryDelta]) {
            lock.lock(); defer { lock.unlock() }
            items.append(contentsOf: deltas.map(\.json))
        }
        func take() -> JSON {
            lock.lock(); defer { lock.unlock() }
            defer { items = [] }
            return .array(items)
        }
    }
    let server = ScriptedServer()

    init(usesFile: Bool) throws {
        if usesFile {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("scn-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            path = dir.appendingPathComponent("store.optimist").path
        } else {
            path = nil
        }
        store = try Store.open(path: path)
    }

    static func run(file: URL) throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var runner = try ScenarioRunner(usesFile: lines.contains { $0.trimmingCharacters(in: .whitespaces) == "reopen" })
        defer {
            try? runner.stopSync()
            try? runner.store.close()
        }
        for (n, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                try runner.step(line)
            } catch let f as Failure {
                throw Failure(line: n + 1, text: line, message: f.message)
            }
        }
    }

    func id(_ name: String) throws -> MutationID {
        if let id = ids[name] { return id }
        if let literal = MutationID(name) { return literal }
        throw Failure(line: 0, text: "", message: "unbound name \(name)")
    }

    static func parseOp(_ segment: String) throws -> Op {
        let t = segment.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
        func json(_ s: String) throws -> Record { try JSONParser.parseObject(s) }
        switch t.first {
        case "put" where t.count == 4: return .put(collection: Key(t[1]), key: Key(t[2]), value: try json(t[3]))
        case "patch" where t.count == 4: return .patch(collection: Key(t[1]), key: Key(t[2]), value: try json(t[3]))
        case "delete" where t.count == 3: return .delete(collection: Key(t[1]), key: Key(t[2]))
        case "incr" where t.count == 4:
            let rest = t[3].split(separator: " ")
            guard rest.count == 2, let d = Double(rest[1]) else { break }
            return .incr(collection: Key(t[1]), key: Key(t[2]), field: Key(String(rest[0])), delta: d)
        default: break
        }
        throw Failure(line: 0, text: "", message: "bad op: \(segment)")
    }

    mutating func step(_ line: String) throws {
        var body = line, expected: String?
        if let r = line.range(of: " => ") {
            body = String(line[..<r.lowerBound])
            expected = String(line[r.upperBound...])
        }
        let segments = body.components(separatedBy: " | ")
        let words = segments[0].split(separator: " ").map(String.init)
        let ops = try segments.dropFirst().map(Self.parseOp)
        let expectedCode = expected.flatMap { Self.codes[$0.split(separator: " ").first.map(String.init) ?? ""] }

        var value: String?
        var code: Int32 = 0
        do {
            value = try perform(words, ops, head: segments[0])
        } catch let e as OptimistError {
            code = e.code
            if case .duplicate(let existing) = e {
                let other = expected?.split(separator: " ").dropFirst().first.map(String.init)
                if let other, try id(other) != existing {
                    throw Failure(line: 0, text: "", message: "DUPLICATE returned id \(existing), expected \(other)")
                }
            }
        }
        if let want = expectedCode {
            guard code == want else {
                throw Failure(line: 0, text: "", message: "expected code \(want), got \(code) (value \(value ?? "-"))")
            }
            return
        }
        guard code == 0 else { throw Failure(line: 0, text: "", message: "failed with code \(code)") }
        guard let expected else { return }
        guard let value else { throw Failure(line: 0, text: "", message: "no value to compare with \(expected)") }
        if words[0] == "viewget" || words[0] == "count" {
            guard Double(value) == Double(expected) else {
                throw Failure(line: 0, text: "", message: "expected \(expected), got \(value)")
            }
        } else if value.first == "{" || value.first == "[" {
            guard (try? JSONParser.parse(value)) == (try? JSONParser.parse(expected)), value == expected else {
                throw Failure(line: 0, text: "", message: "expected \(expected), got \(value)")
            }
        } else if value != expected {
            throw Failure(line: 0, text: "", message: "expected \(expected), got \(value)")
        }
    }

    /// Performs one command; returns the value it reads, if any.
    mutating func perform(_ w: [String], _ ops: [Op], head: String) throws -> String? {
        func star(_ s: String) -> Key? { s == "*" ? nil : Key(s) }
        switch w[0] {
        case "mutate":
            var dedupe: String?, policy = FailurePolicy.rollback
            for opt in w.dropFirst(2) {
                if opt.hasPrefix("dedupe=") { dedupe = String(opt.dropFirst(7)) }
                if opt == "policy=keep" { policy = .keep }
            }
            ids[w[1]] = try store.mutate(ops, dedupeKey: dedupe, policy: policy)
        case "commit": try store.commit(try id(w[1]), serverOps: ops.isEmpty ? nil : ops)
        case "rollback": try store.rollback(try id(w[1]), reason: w.count > 2 ? w[2...].joined(separator: " ") : nil)
        case "server": try store.serverApply(ops)
        case "get":
            guard let r = try store.get(Key(w[1]), Key(w[2])) else { throw OptimistError.notFound("absent") }
            return JSONWriter.string(r)
        case "confirmed":
            guard let r = try store.confirmed(Key(w[1]), Key(w[2])) else { throw OptimistError.notFound("absent") }
            return JSONWriter.string(r)
        case "pending": return String(try store.isPending(Key(w[1]), Key(w[2])))
        case "scan":
            let rows = try store.scan(Key(w[1]), prefix: star(w[2]) ?? "", limit: Int(w[3]) ?? 0)
            return JSONWriter.string(.array(rows.map { .array([.string($0.key.string), .object($0.value)]) }))
        case "status": return try store.status(try id(w[1])).description
        case "count": return String(try store.pendingCount())
        case "next":
            guard let m = try store.outboxNext(now: Int64(w[1])!) else { throw OptimistError.notFound("nothing due") }
            return ids.first { $0.value == m.id }?.key ?? String(m.id)
        case "fail": try store.fail(try id(w[1]), transient: w[2] == "transient", now: Int64(w[3])!)
        case "retry": try store.retry(try id(w[1]))
        case "loaded": try store.markLoaded(Key(w[1]), from: Key(w[2]), to: Key(w[3]), at: Int64(w[4])!)
        case "stale": return String(try store.needsReload(Key(w[1]), Key(w[2]), now: Int64(w[3])!, maxAge: Int64(w[4])!))
        case "view": try store.defineView(w[1], collection: Key(w[2]), prefix: star(w[3]) ?? "", kind: try ViewKind(parsing: w[4]))
        case "viewget": return JSONWriter.string(.number(try store.viewValue(w[1])))
        case "subscribe":
            let received = Received()
            let id = try store.subscribe(collection: star(w[2]), prefix: star(w[3])) { received.add($0) }
            subscriptions[w[1]] = (id, received)
        case "unsubscribe":
            guard let sub = subscriptions[w[1]] else { throw Failure(line: 0, text: "", message: "unknown subscription") }
            try store.unsubscribe(sub.id)
        case "changes":
            guard let sub = subscriptions[w[1]] else { throw Failure(line: 0, text: "", message: "unknown subscription") }
            return JSONWriter.string(sub.received.take())
        case "index":
            // The field as a spec writes it (dotted, or a JSON array of names), as C takes it.
            let json: JSON = w[2].hasPrefix("[") ? try JSONParser.parse(w[2]) : .string(w[2])
            try store.defineIndex(collection: Key(w[1]), field: try FieldPath(parsing: json))
        case "query":
            // The spec is the rest of the line after "query Q ".
            guard w.count > 2, queries[w[1]] == nil else { throw Failure(line: 0, text: "", message: "query needs a new Q and a SPEC") }
            let spec = String(head.dropFirst("query ".count + w[1].count + 1))
            let q = try store.query(json: spec)
            let received = ReceivedDeltas()
            _ = try q.subscribe { received.add($0) }
            queries[w[1]] = (q, received)
        case "rows":
            guard let q = queries[w[1]] else { throw Failure(line: 0, text: "", message: "unknown query") }
            return JSONWriter.string(.array(try q.query.rows().map(\.json)))
        case "deltas":
            guard let q = queries[w[1]] else { throw Failure(line: 0, text: "", message: "unknown query") }
            return JSONWriter.string(q.received.take())
        case "qclose":
            guard let q = queries[w[1]] else { throw Failure(line: 0, text: "", message: "unknown query") }
            q.query.close()
        case "reply": try queueReply(w, head)
        case "sync":
            switch w.count > 1 ? w[1] : "" {
            case "start": try startSync(w.dropFirst(2))
            case "stop": try stopSync()
            case "now": try store.syncNow()
            case "headers": try store.setSyncHeaders(try w.dropFirst(2).map(Self.header))
            default: throw Failure(line: 0, text: "", message: "sync start|stop|now|headers")
            }
        case "syncwait":
            guard w.count == 2, let n = Int(w[1]) else { throw Failure(line: 0, text: "", message: "syncwait needs N") }
            try syncWait(n)
        case "requests":
            let taken = server.locked { () -> [ScriptedServer.Request] in
                defer { server.requests = [] }
                return server.requests
            }
            return JSONWriter.string(.array(taken.map { r -> JSON in
                if r.endpoint == "push" {
                    return .array([.string("push"), .array(r.mutations.map {
                        .string(name(of: $0.id) + ($0.retry > 0 ? "/\($0.retry)" : ""))
                    })])
                }
                return .array([.string("pull"), r.cursor, .array(r.unacked.map { .string(name(of: $0)) })])
            }))
        case "syncstate": return settledStatus().state.rawValue
        case "syncerror": return settledStatus().lastError ?? "null"
        case "syncstatus":
            var o = settledStatus().json.object ?? [:]
            o["last_error"] = nil
            return JSONWriter.string(.object(o))
        case "gap":
            guard w.count == 3, let k = Int(w[1]), let ms = Double(w[2]) else {
                throw Failure(line: 0, text: "", message: "gap needs K MS")
            }
            let times = server.locked { server.entered }
            guard k >= 2, k <= times.count else { throw Failure(line: 0, text: "", message: "no request \(k) yet") }
            return String(times[k - 1] - times[k - 2] >= ms - 5)
        case "header":
            guard w.count == 2 else { throw Failure(line: 0, text: "", message: "header needs NAME") }
            return server.locked { server.lastHeaders.first { $0.name == w[1] }?.value } ?? "null"
        case "reopen":
            try stopSync()
            try store.flush()
            try store.close()
            store = try Store.open(path: path)
        default:
            throw Failure(line: 0, text: "", message: "unknown command \(w[0])")
        }
        return nil
    }
}

/// The server a sync scenario scripts (README: "Sync scenarios"): the sync's transport, which
/// answers each request with the next queued reply and blocks while none is queued, and its
/// status listener, which keeps the last *settled* status (one that is not `pushing` or
/// `pulling`). Shared by the runner (main thread) and the sync's thread, under one condition.
final class ScriptedServer: SyncTransport, @unchecked Sendable {
    struct Reply {
        let endpoint: String
        let reply: SyncReply
    }

    /// One answered request: its endpoint and, from its body, the pushed `(id, retry)` pairs or
    /// the pull's cursor and unacked ids.
    struct Request {
        let endpoint: String
        let mutations: [(id: MutationID, retry: Int)]
        let cursor: JSON
        let unacked: [MutationID]
    }

    let cond = NSCondition()
    // Guarded by `cond`.
    var replies: [Reply] = []
    var requests: [Request] = []  // answered since the last `requests`
    var entered: [Double] = []     // when each answered request reached the transport (ms)
    var answered = 0
    var blocked = false
    var mismatch: String?
    var stopRequested = false
    var stoppedSeen = false
    var running = false
    var settled: SyncStatus?
    var settledAfter = 0
    var lastHeaders: [SyncHeader] = []
    /// The store the sync runs on (the transport stops the sync from its own thread).
    var store: Store?

    static func nowMs() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) * 1000 + Double(t.tv_nsec) / 1_000_000
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        cond.lock()
        defer { cond.unlock() }
        return try body()
    }

    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        let endpoint = request.endpoint.rawValue
        cond.lock()
        let entry = Self.nowMs()
        while true {
            if stopRequested || cancelled() {
                blocked = false
                let s = store
                cond.broadcast()
                cond.unlock()
                s?.stopSync()  // from the sync's own thread: asks it to stop, returns at once
                return .unreachable("the scenario stopped the sync")
            }
            if mismatch == nil, let next = replies.first {
                if next.endpoint == endpoint {
                    replies.removeFirst()
                    blocked = false
                    requests.append(Self.parse(endpoint, request.body))
                    entered.append(entry)
                    lastHeaders = request.headers
                    answered += 1
                    cond.broadcast()
                    cond.unlock()
                    return next.reply
                }
                mismatch = "request \(answered + 1) is a \(endpoint), the next scripted reply is for \(next.endpoint)"
            }
            blocked = true
            cond.broadcast()
            if Self.nowMs() - entry > 60_000 {
                blocked = false
                cond.unlock()
                return .unreachable("no reply scripted for 60 s")
            }
            _ = cond.wait(until: Date(timeIntervalSinceNow: 0.05))
        }
    }

    /// The status listener: keeps the last settled status, and notes the final `stopped`.
    func heard(_ status: SyncStatus) {
        locked {
            if status.state != .pushing && status.state != .pulling {
                settled = status
                settledAfter = answered
            }
            if status.state == .stopped { stoppedSeen = true }
            cond.broadcast()
        }
    }

    static func parse(_ endpoint: String, _ body: String) -> Request {
        let o = (try? JSONParser.parse(body))?.object ?? [:]
        var mutations = [(id: MutationID, retry: Int)]()
        if case .array(let items)? = o["mutations"] {
            for case .object(let m) in items {
                mutations.append((MutationID(m["id"]?.number ?? 0), Int(m["retry"]?.number ?? 0)))
            }
        }
        var unacked = [MutationID]()
        if case .array(let items)? = o["unacked"] { unacked = items.map { MutationID($0.number ?? 0) } }
        return Request(endpoint: endpoint, mutations: mutations, cursor: o["cursor"] ?? .null, unacked: unacked)
    }
}

// MARK: Sync scenarios

extension ScenarioRunner {
    /// The name bound to `id` (or its digits).
    func name(of id: MutationID) -> String {
        ids.first { $0.value == id }?.key ?? String(id)
    }

    static func header(_ text: String) throws -> SyncHeader {
        guard let colon = text.firstIndex(of: ":") else {
            throw Failure(line: 0, text: "", message: "a header is NAME:VALUE")
        }
        return SyncHeader(String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// The text of `head` after its first `n` words ("" when there is none).
    static func rest(_ head: String, after n: Int) -> String {
        let parts = head.split(separator: " ", maxSplits: n, omittingEmptySubsequences: false)
        return parts.count > n ? String(parts[n]) : ""
    }

    /// `@NAME` replaced by the id bound to NAME.
    func substitute(_ text: String) throws -> String {
        var out = ""
        var i = text.startIndex
        func isNameChar(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_") }
        while i < text.endIndex {
            let c = text[i]
            let next = text.index(after: i)
            if c == "@", next < text.endIndex, isNameChar(text[next]) {
                var end = next
                while end < text.endIndex, isNameChar(text[end]) { end = text.index(after: end) }
                out += String(try id(String(text[next..<end])))
                i = end
            } else {
                out.append(c)
                i = next
            }
        }
        return out
    }

    /// `reply push|pull unreachable` / `reply push|pull STATUS [retry-after=MS] [BODY]`.
    func queueReply(_ w: [String], _ head: String) throws {
        guard w.count >= 3, w[1] == "push" || w[1] == "pull" else {
            throw Failure(line: 0, text: "", message: "reply push|pull STATUS|unreachable ...")
        }
        let reply: SyncReply
        if w[2] == "unreachable", w.count == 3 {
            reply = .unreachable("scripted: no answer")
        } else {
            guard let status = Int(w[2]) else { throw Failure(line: 0, text: "", message: "bad status \(w[2])") }
            var after: Int64?
            var skip = 3
            if w.count > 3, w[3].hasPrefix("retry-after=") {
                guard let ms = Int64(w[3].dropFirst(12)) else { throw Failure(line: 0, text: "", message: "bad retry-after") }
                after = ms
                skip = 4
            }
            reply = .http(status: status, body: try substitute(Self.rest(head, after: skip)), retryAfterMs: after)
        }
        server.locked { server.replies.append(.init(endpoint: w[1], reply: reply)); server.cond.broadcast() }
    }

    /// `sync start [batch=N] [header=NAME:VALUE ...]`.
    func startSync(_ args: ArraySlice<String>) throws {
        var batch = 100
        var headers = [SyncHeader]()
        for a in args {
            if a.hasPrefix("batch="), let n = Int(a.dropFirst(6)) { batch = n }
            else if a.hasPrefix("header=") { headers.append(try Self.header(String(a.dropFirst(7)))) }
            else { throw Failure(line: 0, text: "", message: "bad sync start option \(a)") }
        }
        let server = self.server
        let s = store
        server.locked {
            server.stoppedSeen = false
            server.stopRequested = false
            server.store = s
        }
        let options = SyncOptions(transport: server, headers: headers, pullIntervalMs: 0, maxBatch: batch,
                                  timeoutMs: 10_000, backoffBaseMs: 1, backoffMaxMs: 20,
                                  onStatus: { server.heard($0) })
        try store.startSync(options)
        server.locked { server.running = true }
    }

    /// Stops the sync: a request blocked in the transport (or one that reaches it now) stops the
    /// sync from the sync's own thread and gets no answer; then waits for the final `stopped`.
    func stopSync() throws {
        let wasRunning = server.locked { () -> Bool in
            server.stopRequested = true
            server.cond.broadcast()
            return server.running
        }
        store.stopSync()
        if wasRunning {
            let deadline = Date(timeIntervalSinceNow: 10)
            let seen = server.locked { () -> Bool in
                while !server.stoppedSeen && Date() < deadline { _ = server.cond.wait(until: deadline) }
                return server.stoppedSeen
            }
            guard seen else { throw Failure(line: 0, text: "", message: "the sync did not report stopped within 10 s") }
        }
        server.locked {
            server.running = false
            server.stopRequested = false
        }
    }

    /// The last status the sync published that is not `pushing`/`pulling` (none yet: the
    /// store's sync status).
    func settledStatus() -> SyncStatus {
        server.locked { server.settled } ?? store.syncStatus
    }

    /// Waits (10 s at most) until exactly `n` requests have been answered and the sync has
    /// dealt with the last: it waits in request n+1 with no reply queued, or it is at rest
    /// (not running; or it settled after request n as `unauthorized`, or idle per
    /// waitForSyncIdle(0)).
    func syncWait(_ n: Int) throws {
        let deadline = ScriptedServer.nowMs() + 10_000
        while true {
            let (answered, queued, blocked, mismatch, running, after, state) = server.locked {
                (server.answered, server.replies.count, server.blocked, server.mismatch, server.running,
                 server.settledAfter, server.settled?.state)
            }
            if let mismatch { throw Failure(line: 0, text: "", message: mismatch) }
            if answered > n { throw Failure(line: 0, text: "", message: "\(answered) requests were answered already") }
            if answered == n {
                if queued == 0 && blocked { return }
                var rest = !running
                if !rest && after == n {
                    rest = state == .unauthorized || (try? store.waitForSyncIdle(timeoutMs: 0)) == true
                }
                if rest {
                    if queued > 0 { throw Failure(line: 0, text: "", message: "the sync is at rest with \(queued) scripted replies unused") }
                    return
                }
            }
            if ScriptedServer.nowMs() > deadline {
                throw Failure(line: 0, text: "", message: "timed out: \(answered) answered, \(queued) replies queued, "
                              + "blocked \(blocked), settled state \(state?.rawValue ?? "-")")
            }
            usleep(1000)
        }
    }
}
