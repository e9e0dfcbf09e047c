import Synchronization
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistSync
import OptimistOpen

/// A protocol server in the test, as a transport: records, exactly-once outcomes by
/// (client, id), a change log for cursors. Tests script faults on top of it (lose the answer
/// after applying, answer an HTTP status, answer a given body, block).
final class FakeServer: SyncTransport, @unchecked Sendable {
    struct Outcome { var ok: Bool; var retry: Int; var error: String?; var seq: Int }

    private let lock = Mutex(())
    private var records: [String: Record] = [:]   // "coll\u{0}key"
    private var seqOf: [String: Int] = [:]
    private var seq = 0
    private var outcomes: [String: Outcome] = [:]   // "client/id"
    /// Every mutation id applied (ok), per client, in order: exactly-once and order checks.
    private(set) var applied: [String: [MutationID]] = [:]
    private(set) var requests: [(endpoint: SyncEndpoint, body: String, headers: [SyncHeader])] = []

    /// Faults for the next requests, taken in order (nil: answer normally).
    enum Fault { case loseAnswer, status(Int, retryAfterMs: Int64?), body(String), unreachable }
    var faults: [Fault] = []
    /// Refuses (rejects) mutations with an op on these collections.
    var refuse: Set<String> = []
    /// Answers `retry` for these ids (once each).
    var retryOnce: Set<MutationID> = []
    /// Runs before answering (to block, or to count).
    var onRequest: (@Sendable (SyncRequest) -> Void)?
    var pageSize = 1_000
    /// Gives records created under a `tmp-` key a key of its own, and says so in `renames`.
    var assignKeys = false
    private var assigned: [String: String] = [:]

    /// Which database the server runs on: cursors of an earlier one are answered with
    /// `reset` (see ``replaceDatabase(with:)``). Cursors carry it from the first replacement on.
    private var epoch = 0

    /// The server's database is replaced (a restore, a failover): its records are `ops`'
    /// result, its change log starts again, and a cursor from before is answered with `reset`.
    func replaceDatabase(with ops: [Op]) {
        lock.withLock { _ in
            records = [:]
            seqOf = [:]
            seq = 0
            epoch += 1
        }
        serverApply(ops)
    }

    /// The position a cursor names in this database's change log; nil for another database's.
    private func position(_ cursor: String) -> Int? {
        if epoch == 0 { return Int(cursor) }
        let prefix = "e\(epoch)."
        guard cursor.hasPrefix(prefix) else { return nil }
        return Int(cursor.dropFirst(prefix.count))
    }

    private func cursorText(_ position: Int) -> String { epoch == 0 ? String(position) : "e\(epoch).\(position)" }

    func value(_ c: String, _ k: String) -> Record? { lock.withLock { _ in records["\(c)\u{0}\(k)"] } }
    func serverApply(_ ops: [Op]) {
        lock.withLock { _ in
            for op in ops { write(op.collection.string, op.key.string, (try? op.apply(to: records["\(op.collection.string)\u{0}\(op.key.string)"]).get()) ?? nil) }
        }
    }
    var requestCount: Int { lock.withLock { _ in requests.count } }
    var pullCount: Int { lock.withLock { _ in requests.filter { $0.endpoint == .pull }.count } }
    /// Adds a fault for a later request, while the sync runs (under the server's lock).
    func scheduleFault(_ fault: Fault) { lock.withLock { _ in faults.append(fault) } }

    private func write(_ c: String, _ k: String, _ v: Record?) {
        seq += 1
        records["\(c)\u{0}\(k)"] = v
        seqOf["\(c)\u{0}\(k)"] = seq
    }

    func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
        onRequest?(request)
        return lock.withLock { _ -> SyncReply in
            requests.append((request.endpoint, request.body, request.headers))
            let fault = faults.isEmpty ? nil : faults.removeFirst()
            switch fault {
            case .status(let s, let ra)?: return .http(status: s, body: #"{"error":"scripted"}"#, retryAfterMs: ra)
            case .body(let b)?: return .http(status: 200, body: b, retryAfterMs: nil)
            case .unreachable?: return .unreachable("scripted: connection refused")
            default: break
            }
            guard case .object(let o)? = try? JSONParser.parse(request.body), case .string(let client)? = o["client_id"] else {
                return .http(status: 400, body: #"{"error":"bad request"}"#, retryAfterMs: nil)
            }
            let reply = request.endpoint == .push ? push(client, o) : pull(client, o)
            if case .loseAnswer? = fault { return .unreachable("scripted: connection reset after the server applied") }
            return .http(status: 200, body: reply, retryAfterMs: nil)
        }
    }

    private func push(_ client: String, _ o: [Key: JSON]) -> String {
        guard case .array(let ms)? = o["mutations"] else { return "{}" }
        var results = [JSON]()
        for m in ms {
            guard case .object(let mo) = m, case .number(let idD)? = mo["id"], case .array(let opsJ)? = mo["ops"] else { continue }
            let id = MutationID(idD)
            let retry = Int(mo["retry"]?.number ?? 0)
            let key = "\(client)/\(id)"
            if let known = outcomes[key], known.ok || retry <= known.retry {
                results.append(known.ok ? ["id": .number(idD), "status": "ok"] : ["id": .number(idD), "status": "rejected", "error": .string(known.error ?? "")])
                continue
            }
            if retryOnce.remove(id) != nil {
                results.append(["id": .number(idD), "status": "retry", "retry_after_ms": 250])
                break
            }
            var ops = opsJ.compactMap { try? Op(json: $0) }
            var renames = [JSON]()
            if assignKeys {
                ops = ops.map { op in
                    guard op.key.string.hasPrefix("tmp-") else { return op }
                    let k = "\(op.collection.string)\u{0}\(op.key.string)"
                    let real: String
                    if let known = assigned[k] { real = known } else {
                        real = "srv-\(assigned.count + 1)"
                        assigned[k] = real
                        renames.append(["coll": .string(op.collection.string), "from": .string(op.key.string), "to": .string(real)])
                    }
                    switch op {
                    case .put(let c, _, let v): return .put(collection: c, key: Key(real), value: v)
                    case .patch(let c, _, let v): return .patch(collection: c, key: Key(real), value: v)
                    case .delete(let c, _): return .delete(collection: c, key: Key(real))
                    case .incr(let c, _, let f, let d): return .incr(collection: c, key: Key(real), field: f, delta: d)
                    }
                }
            }
            if ops.contains(where: { refuse.contains($0.collection.string) }) {
                outcomes[key] = Outcome(ok: false, retry: retry, error: "refused", seq: 0)
                results.append(["id": .number(idD), "status": "rejected", "error": "refused"])
                continue
            }
            var staged: [String: Record?] = [:]
            var failed: String?
            for op in ops {
                let k = "\(op.collection.string)\u{0}\(op.key.string)"
                let cur = staged[k] ?? records[k]
                switch op.apply(to: cur) {
                case .success(let v): staged[k] = .some(v)
                case .failure(let e): failed = e.message
                }
            }
            if let failed {
                outcomes[key] = Outcome(ok: false, retry: retry, error: failed, seq: 0)
                results.append(["id": .number(idD), "status": "rejected", "error": .string(failed)])
                continue
            }
            var absolute = [JSON]()
            for (k, v) in staged.sorted(by: { $0.key < $1.key }) {
                let parts = k.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
                write(parts[0], parts[1], v)
                absolute.append(v.map { Op.put(collection: Key(parts[0]), key: Key(parts[1]), value: $0).json } ?? Op.delete(collection: Key(parts[0]), key: Key(parts[1])).json)
            }
            outcomes[key] = Outcome(ok: true, retry: retry, error: nil, seq: seq)
            applied[client, default: []].append(id)
            results.append(renames.isEmpty ? ["id": .number(idD), "status": "ok", "ops": .array(absolute)]
                                           : ["id": .number(idD), "status": "ok", "ops": .array(absolute), "renames": .array(renames)])
        }
        return JSONWriter.string(["results": .array(results)])
    }

    private func pull(_ client: String, _ o: [Key: JSON]) -> String {
        var cursor = 0
        var reset = false
        if case .string(let c)? = o["cursor"] {
            if let p = position(c) { cursor = p } else { reset = true }
        }
        let changed = seqOf.filter { $0.value > cursor }.sorted { $0.value < $1.value }
        let page = changed.prefix(pageSize)
        let more = changed.count > pageSize
        var changes = [JSON]()
        for (k, _) in page {
            let parts = k.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            if let v = records[k] ?? nil {
                changes.append(Op.put(collection: Key(parts[0]), key: Key(parts[1]), value: v).json)
            } else {
                changes.append(Op.delete(collection: Key(parts[0]), key: Key(parts[1])).json)
            }
        }
        var outs = [JSON]()
        if !more, case .array(let ids)? = o["unacked"] {
            for i in ids {
                guard let d = i.number, let known = outcomes["\(client)/\(MutationID(d))"] else { continue }
                outs.append(known.ok ? ["id": .number(d), "status": "ok", "retry": .number(Double(known.retry))]
                                     : ["id": .number(d), "status": "rejected", "error": .string(known.error ?? ""), "retry": .number(Double(known.retry))])
            }
        }
        let newCursor = more ? (page.last?.value ?? cursor) : seq
        var reply: [Key: JSON] = ["cursor": .string(cursorText(newCursor)), "more": .bool(more), "changes": .array(changes),
                                  "outcomes": .array(outs)]
        if reset { reply["reset"] = .bool(true) }
        return JSONWriter.string(reply)
    }
}

/// Runs a machine until it has nothing to do at `now` (at most `limit` steps).
@discardableResult
func drain(_ m: SyncMachine, now: Int64, limit: Int = 1_000) -> SyncMachine.Wait? {
    for _ in 0..<limit {
        if let w = m.step(now: now) { return w }
    }
    return nil
}

func put(_ c: Key, _ k: Key, _ v: Record) -> Op { .put(collection: c, key: k, value: v) }
func incr(_ c: Key, _ k: Key, _ f: Key, _ d: Double) -> Op { .incr(collection: c, key: k, field: f, delta: d) }
