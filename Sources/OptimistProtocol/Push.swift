import OptimistModel

/// One mutation in a push request: its id, the retry count it is sent with, its ops.
public struct PushedMutation: Sendable, Equatable {
    public var id: MutationID
    public var retry: Int
    public var ops: [Op]

    public init(id: MutationID, retry: Int, ops: [Op]) {
        self.id = id
        self.retry = retry
        self.ops = ops
    }
}

/// `POST /push`: a client's mutations, in the order they must be applied.
public struct PushRequest: Sendable, Equatable {
    public var clientID: String
    public var mutations: [PushedMutation]
    /// The protocol version it is sent with (``WireProtocol/version`` unless a test says).
    public var version: Int

    public init(clientID: String, mutations: [PushedMutation], version: Int = WireProtocol.version) {
        self.clientID = clientID
        self.mutations = mutations
        self.version = version
    }

    /// The request body.
    public func encoded() -> String {
        let items: [JSON] = mutations.map { m in
            ["id": Wire.number(m.id), "retry": Wire.number(m.retry), "ops": .array(m.ops.map(\.json))]
        }
        return JSONWriter.string(["protocol": Wire.number(version), "client_id": .string(clientID),
                                  "mutations": .array(items)])
    }

    /// A request body, checked field by field (a server's side). `retry` may be left out by a
    /// client that never retries: it counts as 0.
    public static func decode(_ body: JSON) throws(ProtocolViolation) -> PushRequest {
        let (object, clientID, version) = try Wire.envelope(body)
        guard case .array(let items)? = object["mutations"] else { throw ProtocolViolation("mutations must be an array") }
        var mutations = [PushedMutation]()
        mutations.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            guard case .object(let m) = item else { throw ProtocolViolation("mutations[\(n)] must be an object") }
            let id = try Wire.integer(m["id"], "mutations[\(n)].id")
            let retry = m["retry"] == nil ? 0 : try Wire.integer(m["retry"], "mutations[\(n)].retry")
            guard case .array(let opItems)? = m["ops"] else { throw ProtocolViolation("mutations[\(n)].ops must be an array") }
            var ops = [Op]()
            ops.reserveCapacity(opItems.count)
            for (k, opItem) in opItems.enumerated() { ops.append(try Wire.op(opItem, "mutations[\(n)].ops[\(k)]")) }
            mutations.append(PushedMutation(id: id, retry: Int(retry), ops: ops))
        }
        return PushRequest(clientID: clientID, mutations: mutations, version: version)
    }
}

/// The answer to a push: one result per mutation the server processed, in the order sent. A
/// server stops at a `retry` (nothing after it was processed) and may leave out the tail.
public struct PushReply: Sendable, Equatable {
    public var results: [PushResult]

    public init(results: [PushResult]) { self.results = results }

    /// The reply body.
    public func encoded() -> String {
        let items: [JSON] = results.map { r in
            var item: [Key: JSON] = ["id": Wire.number(r.id)]
            switch r.outcome {
            case .ok(let ops, let renames):
                item["status"] = .string(WireStatus.ok.rawValue)
                if let ops { item["ops"] = .array(ops.map(\.json)) }
                if !renames.isEmpty {
                    item["renames"] = .array(renames.map { ["coll": .string($0.collection.string), "from": .string($0.from.string),
                                                            "to": .string($0.to.string)] })
                }
            case .rejected(let error):
                item["status"] = .string(WireStatus.rejected.rawValue)
                item["error"] = .string(error)
            case .retry(let afterMs, let error):
                item["status"] = .string(WireStatus.retry.rawValue)
                if let afterMs { item["retry_after_ms"] = Wire.number(afterMs) }
                if let error { item["error"] = .string(error) }
            }
            return .object(item)
        }
        return JSONWriter.string(["results": .array(items)])
    }

    /// A reply to a push of `sent` (ids in send order), checked whole (a client's side). Each
    /// result must name a sent id, once, in send order; a result after a `retry` is a violation.
    public static func decode(_ body: String, sent: [MutationID]) throws(ProtocolViolation) -> PushReply {
        let o = try Wire.object(body)
        guard case .array(let items)? = o["results"] else { throw ProtocolViolation("a push reply needs a results array") }
        var position = [MutationID: Int]()
        for (i, id) in sent.enumerated() { position[id] = i }
        var out = [PushResult]()
        var last = -1
        var stopped = false
        for item in items {
            guard case .object(let r) = item else { throw ProtocolViolation("a push result must be an object") }
            let id = try Wire.mutationID(r["id"], "a push result")
            guard let p = position[id] else { throw ProtocolViolation("a push result names mutation \(id), which was not sent") }
            guard p > last else { throw ProtocolViolation("push results must follow the order sent (mutation \(id) is out of order or twice)") }
            guard !stopped else { throw ProtocolViolation("a push result follows a retry (mutation \(id))") }
            last = p
            guard case .string(let word)? = r["status"] else { throw ProtocolViolation("push result \(id) needs a string status") }
            switch WireStatus(rawValue: word) {
            case .ok?:
                var ops: [Op]?
                switch r["ops"] {
                case nil, .null?: ops = nil
                case .array(let list)?: ops = try list.map { (j) throws(ProtocolViolation) in try Wire.op(j, "ok result \(id)") }
                default: throw ProtocolViolation("ok result \(id): ops must be an array")
                }
                out.append(PushResult(id: id, outcome: .ok(ops: ops, renames: try renames(r["renames"], id))))
            case .rejected?:
                out.append(PushResult(id: id, outcome: .rejected(error: try Wire.text(r["error"]) ?? "rejected by the server")))
            case .retry?:
                let after = try Wire.milliseconds(r["retry_after_ms"], "retry result \(id)")
                out.append(PushResult(id: id, outcome: .retry(afterMs: after, error: try Wire.text(r["error"]))))
                stopped = true
            case nil:
                throw ProtocolViolation("push result \(id) has an unknown status \"\(word)\"")
            }
        }
        return PushReply(results: out)
    }

    private static func renames(_ j: JSON?, _ id: MutationID) throws(ProtocolViolation) -> [KeyRename] {
        do throws(OptimistError) { return try KeyRename.list(from: j) } catch {
            throw ProtocolViolation("ok result \(id): \(error.message)")
        }
    }
}
