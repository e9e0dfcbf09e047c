import Foundation
import Optimist

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
                                     c.value.map(JSON.object) ?? .null, .bool(c.pending), .string(c.cause.description)]))
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
        defer { try? runner.store.close() }
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
            value = try perform(words, ops)
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
    mutating func perform(_ w: [String], _ ops: [Op]) throws -> String? {
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
        case "reopen":
            try store.flush()
            try store.close()
            store = try Store.open(path: path)
        default:
            throw Failure(line: 0, text: "", message: "unknown command \(w[0])")
        }
        return nil
    }
}
