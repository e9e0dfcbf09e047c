import OptimistModel

// The wire protocol, version 1 (docs/protocol.md): request bodies checked field by field into
// typed requests, and answers written as canonical JSON.

/// A request the server will not process: answered 400 with the message.
struct BadRequest: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

struct PushRequest: Sendable {
    let clientID: String
    let mutations: [WireMutation]
}

struct WireMutation: Sendable {
    let id: Int64
    let retry: Int64
    let ops: [Op]
}

struct PullRequest: Sendable {
    let clientID: String
    /// nil: from the beginning.
    let cursor: Int64?
    let unacked: [Int64]
}

enum WireDecoding {
    /// The largest integer a JSON number (a double) carries exactly.
    static let maxInteger: Double = 9_007_199_254_740_991

    static func push(_ body: JSON) throws(BadRequest) -> PushRequest {
        let (object, clientID) = try envelope(body)
        guard case .array(let items)? = object["mutations"] else { throw BadRequest("mutations must be an array") }
        var mutations = [WireMutation]()
        mutations.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            guard case .object(let m) = item else { throw BadRequest("mutations[\(n)] must be an object") }
            let id = try integer(m["id"], "mutations[\(n)].id")
            // `retry` may be left out by a client that never retries: it counts as 0.
            let retry = m["retry"] == nil ? 0 : try integer(m["retry"], "mutations[\(n)].retry")
            guard case .array(let opItems)? = m["ops"] else { throw BadRequest("mutations[\(n)].ops must be an array") }
            var ops = [Op]()
            ops.reserveCapacity(opItems.count)
            for (k, opItem) in opItems.enumerated() {
                do throws(OptimistError) { ops.append(try Op(json: opItem)) } catch {
                    throw BadRequest("mutations[\(n)].ops[\(k)]: \(error.message)")
                }
            }
            mutations.append(WireMutation(id: id, retry: retry, ops: ops))
        }
        return PushRequest(clientID: clientID, mutations: mutations)
    }

    static func pull(_ body: JSON) throws(BadRequest) -> PullRequest {
        let (object, clientID) = try envelope(body)
        var cursor: Int64?
        switch object["cursor"] {
        case nil, .null?: cursor = nil
        case .string(let s)?:
            // Cursors are decimal seqs this server wrote; anything else was not issued here.
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let c = Int64(s) else {
                throw BadRequest("cursor is not one this server issued")
            }
            cursor = c
        default: throw BadRequest("cursor must be a string or null")
        }
        var unacked = [Int64]()
        switch object["unacked"] {
        case nil, .null?: break
        case .array(let items)?:
            for (n, item) in items.enumerated() { unacked.append(try integer(item, "unacked[\(n)]")) }
        default: throw BadRequest("unacked must be an array of mutation ids")
        }
        return PullRequest(clientID: clientID, cursor: cursor, unacked: unacked)
    }

    /// The members every request has: `protocol` (1) and `client_id`.
    private static func envelope(_ body: JSON) throws(BadRequest) -> ([Key: JSON], String) {
        guard case .object(let object) = body else { throw BadRequest("the body must be a JSON object") }
        guard let version = object["protocol"] else { throw BadRequest("protocol is missing") }
        guard case .number(1) = version else { throw BadRequest("unsupported protocol \(version) (this server speaks 1)") }
        guard case .string(let clientID)? = object["client_id"] else { throw BadRequest("client_id must be a string") }
        guard !clientID.isEmpty, clientID.utf8.count <= 200, !clientID.utf8.contains(0) else {
            throw BadRequest("client_id must be 1 to 200 bytes without U+0000")
        }
        return (object, clientID)
    }

    /// A mutation id or retry count: a whole number from 0 to 2^53 - 1.
    private static func integer(_ value: JSON?, _ what: String) throws(BadRequest) -> Int64 {
        guard case .number(let d)? = value else { throw BadRequest("\(what) must be a number") }
        guard d >= 0, d <= maxInteger, d.rounded(.towardZero) == d else {
            throw BadRequest("\(what) must be a whole number from 0 to 2^53-1")
        }
        return Int64(d)
    }
}

enum WireEncoding {
    static func push(_ results: [PushResult]) -> String {
        let items: [JSON] = results.map { result in
            switch result {
            case .ok(let id, let ops):
                ["id": .number(Double(id)), "status": "ok", "ops": .array(ops.map(\.json))]
            case .rejected(let id, let error):
                ["id": .number(Double(id)), "status": "rejected", "error": .string(error)]
            }
        }
        return JSONWriter.string(["results": .array(items)])
    }

    /// Written by hand so that stored values (already canonical JSON text) go out as they
    /// are, without a parse and a write per record.
    static func pull(_ answer: PullAnswer) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256 + answer.changes.reduce(0) { $0 + 40 + ($1.value?.utf8.count ?? 0) })
        out += #"{"changes":["#.utf8
        for (n, change) in answer.changes.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"coll":"#.utf8
            JSONWriter.writeString(change.coll, into: &out)
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
        JSONWriter.writeString(String(answer.cursor), into: &out)
        out += #","more":"#.utf8
        out += (answer.more ? "true" : "false").utf8
        out += #","outcomes":"#.utf8
        let outcomes: [JSON] = answer.outcomes.map { o in
            var item: [Key: JSON] = ["id": .number(Double(o.mutationID)), "status": .string(o.status.rawValue),
                                     "retry": .number(Double(o.retry))]
            if let error = o.error { item["error"] = .string(error) }
            return .object(item)
        }
        JSONWriter.write(.array(outcomes), into: &out)
        out += "}".utf8
        return out
    }

    static func error(_ message: String) -> String {
        JSONWriter.string(["error": .string(message)])
    }
}
