import OptimistModel

/// `POST /pull`: the server's changes after `cursor`, and what became of `unacked` mutations.
public struct PullRequest: Sendable, Equatable {
    public var clientID: String
    /// Opaque, from the server's last pull reply; nil: from the beginning.
    public var cursor: String?
    /// Mutations this client sent without hearing back.
    public var unacked: [MutationID]
    /// The ``OpsDigest`` of each of `unacked`'s mutations, in the same order (wire member
    /// `unacked_digests`), so the server can tell an id it recorded with other ops; empty when
    /// the client sends none.
    public var digests: [String]
    /// The protocol version it is sent with (``WireProtocol/version`` unless a test says).
    public var version: Int

    public init(clientID: String, cursor: String?, unacked: [MutationID], digests: [String] = [],
                version: Int = WireProtocol.version) {
        self.clientID = clientID
        self.cursor = cursor
        self.unacked = unacked
        self.digests = digests
        self.version = version
    }

    /// The request body.
    public func encoded() -> String {
        var body: [Key: JSON] = [
            "protocol": Wire.number(version), "client_id": .string(clientID),
            "cursor": cursor.map(JSON.string) ?? .null,
            "unacked": .array(unacked.map { Wire.number($0) }),
        ]
        if !digests.isEmpty { body["unacked_digests"] = .array(digests.map(JSON.string)) }
        return JSONWriter.string(body)
    }

    /// A request body, checked field by field (a server's side). What a cursor may look like
    /// is the server's business (it issued it).
    public static func decode(_ body: JSON) throws(ProtocolViolation) -> PullRequest {
        let (object, clientID, version) = try Wire.envelope(body)
        var cursor: String?
        switch object["cursor"] {
        case nil, .null?: cursor = nil
        case .string(let s)?: cursor = s
        default: throw ProtocolViolation("cursor must be a string or null")
        }
        var unacked = [MutationID]()
        switch object["unacked"] {
        case nil, .null?: break
        case .array(let items)?:
            unacked.reserveCapacity(items.count)
            for (n, item) in items.enumerated() { unacked.append(try Wire.integer(item, "unacked[\(n)]")) }
        default: throw ProtocolViolation("unacked must be an array of mutation ids")
        }
        var digests = [String]()
        switch object["unacked_digests"] {
        case nil, .null?: break
        case .array(let items)?:
            guard items.count == unacked.count else {
                throw ProtocolViolation("unacked_digests must have one digest per unacked id")
            }
            digests.reserveCapacity(items.count)
            for (n, item) in items.enumerated() {
                guard case .string(let d) = item else { throw ProtocolViolation("unacked_digests[\(n)] must be a string") }
                digests.append(d)
            }
        default: throw ProtocolViolation("unacked_digests must be an array of strings")
        }
        return PullRequest(clientID: clientID, cursor: cursor, unacked: unacked, digests: digests, version: version)
    }
}

/// A record as a server stores it, for writing a pull reply without parsing it: its value is
/// canonical JSON text already (nil: deleted).
public struct PulledChange: Sendable, Equatable {
    public var collection: String
    public var key: String
    public var value: String?

    public init(collection: String, key: String, value: String?) {
        self.collection = collection
        self.key = key
        self.value = value
    }
}

/// The answer to a pull: a page of absolute changes, the cursor after them, whether more
/// follow, and (on the last page) the outcomes of the unacked mutations asked about.
public struct PullReply: Sendable, Equatable {
    public var cursor: String
    public var more: Bool
    /// Absolute ops (`put` of a whole record, or `delete`).
    public var changes: [Op]
    public var outcomes: [PullOutcome]
    /// The request's cursor came from another database (a restore, a replaced or failed-over
    /// one) or is older than what the server keeps: the client drops its confirmed records
    /// (pending mutations stay and rebase) and pulls from the start. This reply's `changes`
    /// are then the first page from the start, under `cursor`. Written only when true.
    public var reset: Bool
    /// Protocol 2: spaces the user no longer sees (they left or were removed), applied before
    /// `changes`: the client removes its confirmed records of every collection `S/…` of each
    /// space `S` named. Written only when not empty.
    public var drop: [String]

    public init(cursor: String, more: Bool, changes: [Op], outcomes: [PullOutcome], reset: Bool = false,
                drop: [String] = []) {
        self.cursor = cursor
        self.more = more
        self.changes = changes
        self.outcomes = outcomes
        self.reset = reset
        self.drop = drop
    }

    /// The reply body.
    public func encoded() -> String {
        var body: [Key: JSON] = ["changes": .array(changes.map(\.json)), "cursor": .string(cursor), "more": .bool(more),
                                 "outcomes": Self.outcomesJSON(outcomes)]
        if reset { body["reset"] = .bool(true) }
        if !drop.isEmpty { body["drop"] = .array(drop.map(JSON.string)) }
        return JSONWriter.string(body)
    }

    /// A reply body from stored records, whose values go out as the text they are, without a
    /// parse and a write per record (a server's side).
    public static func encode(cursor: String, more: Bool, changes: [PulledChange], outcomes: [PullOutcome],
                              reset: Bool = false, drop: [String] = []) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256 + changes.reduce(0) { $0 + 40 + ($1.value?.utf8.count ?? 0) })
        out += #"{"changes":["#.utf8
        for (n, change) in changes.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"coll":"#.utf8
            JSONWriter.writeString(change.collection, into: &out)
            out += #","key":"#.utf8
            JSONWriter.writeString(change.key, into: &out)
            if let value = change.value {
                out += #","op":"put","value":"#.utf8
                out += value.utf8
                out += "}".utf8
            } else {
                out += #","op":"delete"}"#.utf8
            }
        }
        out += #"],"cursor":"#.utf8
        JSONWriter.writeString(cursor, into: &out)
        out += #","more":"#.utf8
        out += (more ? "true" : "false").utf8
        out += #","outcomes":"#.utf8
        JSONWriter.write(outcomesJSON(outcomes), into: &out)
        if reset { out += #","reset":true"#.utf8 }
        if !drop.isEmpty {
            out += #","drop":"#.utf8
            JSONWriter.write(.array(drop.map(JSON.string)), into: &out)
        }
        out += "}".utf8
        return out
    }

    private static func outcomesJSON(_ outcomes: [PullOutcome]) -> JSON {
        .array(outcomes.map { o in
            var item: [Key: JSON] = ["id": Wire.number(o.id)]
            switch o.outcome {
            case .ok: item["status"] = .string(WireStatus.ok.rawValue)
            case .rejected(let error):
                item["status"] = .string(WireStatus.rejected.rawValue)
                item["error"] = .string(error)
            }
            if let retry = o.retry { item["retry"] = Wire.number(retry) }
            return .object(item)
        })
    }

    /// A reply body, checked whole (a client's side).
    public static func decode(_ body: String) throws(ProtocolViolation) -> PullReply {
        let o = try Wire.object(body)
        guard case .string(let cursor)? = o["cursor"] else { throw ProtocolViolation("a pull reply needs a string cursor") }
        var more = false
        switch o["more"] {
        case nil, .null?: more = false
        case .bool(let b)?: more = b
        default: throw ProtocolViolation("more must be true or false")
        }
        var reset = false
        switch o["reset"] {
        case nil, .null?: reset = false
        case .bool(let b)?: reset = b
        default: throw ProtocolViolation("reset must be true or false")
        }
        var drop = [String]()
        switch o["drop"] {
        case nil, .null?: break
        case .array(let list)?:
            for item in list {
                guard case .string(let space) = item, SpaceName.isValid(space) else {
                    throw ProtocolViolation("drop must list space names (non-empty, without \"/\")")
                }
                drop.append(space)
            }
        default: throw ProtocolViolation("drop must be an array of space names")
        }
        var changes = [Op]()
        switch o["changes"] {
        case nil, .null?: break
        case .array(let list)?: changes = try list.map { (j) throws(ProtocolViolation) in try Wire.op(j, "a pulled change") }
        default: throw ProtocolViolation("changes must be an array")
        }
        var outcomes = [PullOutcome]()
        switch o["outcomes"] {
        case nil, .null?: break
        case .array(let list)?:
            for item in list {
                guard case .object(let r) = item else { throw ProtocolViolation("an outcome must be an object") }
                let id = try Wire.mutationID(r["id"], "an outcome")
                let retry = try Wire.count(r["retry"], "outcome \(id)")
                switch r["status"] {
                case .string(WireStatus.ok.rawValue)?: outcomes.append(PullOutcome(id: id, outcome: .ok, retry: retry))
                case .string(WireStatus.rejected.rawValue)?:
                    let error = try Wire.text(r["error"]) ?? "rejected by the server"
                    outcomes.append(PullOutcome(id: id, outcome: .rejected(error: error), retry: retry))
                default: throw ProtocolViolation("outcome \(id) needs status ok or rejected")
                }
            }
        default: throw ProtocolViolation("outcomes must be an array")
        }
        return PullReply(cursor: cursor, more: more, changes: changes, outcomes: outcomes, reset: reset, drop: drop)
    }
}
