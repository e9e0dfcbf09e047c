import OptimistCore
import OptimistModel

/// Protocol version 1: the request bodies the sync sends and the checks on what comes back.
///
/// A reply is checked whole before anything of it is applied: a body that is not the
/// protocol changes nothing in the store.
package enum WireProtocol {
    package static let version = 1

    /// Something in a reply that is not the protocol.
    package struct Violation: Error, Equatable {
        package let message: String
        init(_ m: String) { message = m }
    }

    // MARK: Push

    package static func pushBody(clientID: String, _ mutations: [MutationRecord]) -> String {
        let items: [JSON] = mutations.map { m in
            ["id": .number(Double(m.id)), "retry": .number(Double(m.retry)), "ops": .array(m.ops.map(\.json))]
        }
        return JSONWriter.string(["protocol": .number(Double(version)), "client_id": .string(clientID), "mutations": .array(items)])
    }

    /// The results of a push of `sent` (in send order). Each result must name a sent id, once,
    /// in send order; a result after a `retry` is a violation (the server stops there).
    package static func pushResults(_ body: String, sent: [MutationID]) throws(Violation) -> [(id: MutationID, outcome: PushOutcome)] {
        let o = try object(body)
        guard case .array(let items)? = o["results"] else { throw Violation("a push reply needs a results array") }
        var position = [MutationID: Int]()
        for (i, id) in sent.enumerated() { position[id] = i }
        var out = [(id: MutationID, outcome: PushOutcome)]()
        var last = -1
        var stopped = false
        for item in items {
            guard case .object(let r) = item else { throw Violation("a push result must be an object") }
            let id = try mutationID(r["id"], "a push result")
            guard let p = position[id] else { throw Violation("a push result names mutation \(id), which was not sent") }
            guard p > last else { throw Violation("push results must follow the order sent (mutation \(id) is out of order or twice)") }
            guard !stopped else { throw Violation("a push result follows a retry (mutation \(id))") }
            last = p
            guard case .string(let status)? = r["status"] else { throw Violation("push result \(id) needs a string status") }
            switch status {
            case "ok":
                var ops: [Op]?
                switch r["ops"] {
                case nil, .null?: ops = nil
                case .array(let list)?: ops = try list.map { (j) throws(Violation) in try op(j, "ok result \(id)") }
                default: throw Violation("ok result \(id): ops must be an array")
                }
                out.append((id, .ok(ops: ops, renames: try renames(r["renames"], id))))
            case "rejected":
                out.append((id, .rejected(error: try text(r["error"]) ?? "rejected by the server")))
            case "retry":
                out.append((id, .retry(afterMs: try milliseconds(r["retry_after_ms"], "retry result \(id)"), error: try text(r["error"]))))
                stopped = true
            default:
                throw Violation("push result \(id) has an unknown status \"\(status)\"")
            }
        }
        return out
    }

    // MARK: Pull

    package static func pullBody(clientID: String, cursor: String?, unacked: [MutationID]) -> String {
        JSONWriter.string([
            "protocol": .number(Double(version)), "client_id": .string(clientID),
            "cursor": cursor.map(JSON.string) ?? .null,
            "unacked": .array(unacked.map { .number(Double($0)) }),
        ])
    }

    package struct Pull: Equatable {
        package var cursor: String
        package var more: Bool
        package var changes: [Op]
        /// With the retry count the server processed it at, when it said.
        package var outcomes: [(id: MutationID, outcome: PulledOutcome, retry: Int?)]

        package static func == (a: Pull, b: Pull) -> Bool {
            a.cursor == b.cursor && a.more == b.more && a.changes == b.changes
                && a.outcomes.map(\.id) == b.outcomes.map(\.id) && a.outcomes.map(\.outcome) == b.outcomes.map(\.outcome)
        }
    }

    package static func pull(_ body: String) throws(Violation) -> Pull {
        let o = try object(body)
        guard case .string(let cursor)? = o["cursor"] else { throw Violation("a pull reply needs a string cursor") }
        var more = false
        switch o["more"] {
        case nil, .null?: more = false
        case .bool(let b)?: more = b
        default: throw Violation("more must be true or false")
        }
        var changes = [Op]()
        switch o["changes"] {
        case nil, .null?: break
        case .array(let list)?: changes = try list.map { (j) throws(Violation) in try op(j, "a pulled change") }
        default: throw Violation("changes must be an array")
        }
        var outcomes = [(id: MutationID, outcome: PulledOutcome, retry: Int?)]()
        switch o["outcomes"] {
        case nil, .null?: break
        case .array(let list)?:
            for item in list {
                guard case .object(let r) = item else { throw Violation("an outcome must be an object") }
                let id = try mutationID(r["id"], "an outcome")
                let retry = try count(r["retry"], "outcome \(id)")
                switch r["status"] {
                case .string("ok")?: outcomes.append((id, .ok, retry))
                case .string("rejected")?: outcomes.append((id, .rejected(error: try text(r["error"]) ?? "rejected by the server"), retry))
                default: throw Violation("outcome \(id) needs status ok or rejected")
                }
            }
        default: throw Violation("outcomes must be an array")
        }
        return Pull(cursor: cursor, more: more, changes: changes, outcomes: outcomes)
    }

    // MARK: Pieces

    private static func renames(_ j: JSON?, _ id: MutationID) throws(Violation) -> [KeyRename] {
        switch j {
        case nil, .null?: return []
        case .array(let list)?:
            return try list.map { (item) throws(Violation) -> KeyRename in
                guard case .object(let r) = item, case .string(let c)? = r["coll"], case .string(let from)? = r["from"],
                      case .string(let to)? = r["to"], !to.isEmpty else {
                    throw Violation("ok result \(id): a rename needs string coll, from and to")
                }
                return KeyRename(collection: Key(c), from: Key(from), to: Key(to))
            }
        default: throw Violation("ok result \(id): renames must be an array")
        }
    }

    private static func object(_ body: String) throws(Violation) -> [Key: JSON] {
        let value: JSON
        do { value = try JSONParser.parse(body) } catch { throw Violation("the reply is not JSON: \(error)") }
        guard case .object(let o) = value else { throw Violation("the reply is not a JSON object") }
        return o
    }

    private static func op(_ j: JSON, _ what: String) throws(Violation) -> Op {
        do { return try Op(json: j) } catch { throw Violation("\(what): \(error.message)") }
    }

    private static func mutationID(_ j: JSON?, _ what: String) throws(Violation) -> MutationID {
        guard case .number(let d)? = j, d >= 1, d < 9_007_199_254_740_992, d == d.rounded() else {
            throw Violation("\(what) needs a positive integer id")
        }
        return MutationID(d)
    }

    private static func text(_ j: JSON?) throws(Violation) -> String? {
        switch j {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw Violation("error must be a string")
        }
    }

    private static func milliseconds(_ j: JSON?, _ what: String) throws(Violation) -> Int64? {
        switch j {
        case nil, .null?: return nil
        case .number(let d)? where d >= 0 && d.isFinite: return Int64(min(d, 86_400_000))
        default: throw Violation("\(what): retry_after_ms must be a number of milliseconds")
        }
    }

    private static func count(_ j: JSON?, _ what: String) throws(Violation) -> Int? {
        switch j {
        case nil, .null?: return nil
        case .number(let d)? where d >= 0 && d < 1e15 && d == d.rounded(): return Int(d)
        default: throw Violation("\(what): retry must be a whole number")
        }
    }
}
