import Testing
import OptimistCore
import OptimistOpen
import OptimistCore
import OptimistModel

/// The writer saves mutations and records 32 to a statement (their texts in one buffer) and
/// the rest one by one: every column of every row must come back as it was, whichever way it
/// went.
@Suite struct BatchWriterTests {
    @Test(arguments: [1, 31, 32, 33, 64, 100])
    func everyMutationsColumnsSurviveReopen(count: Int) throws {
        let dir = TempDir()
        let path = dir.file("store.db")
        let s = try Store.open(path: path)
        var ids: [MutationID] = []
        for i in 0..<count {
            let op: Op = i % 3 == 0
                ? .put(collection: "logs", key: Key("k\(i)"), value: ["n": .number(Double(i)), "note": .string(String(repeating: "é", count: i))])
                : .incr(collection: "stats", key: Key("s\(i % 5)"), field: "count", delta: Double(i))
            ids.append(try s.mutate(i % 4 == 1 ? [op, .delete(collection: "logs", key: Key("gone\(i)"))] : [op],
                                    dedupeKey: i % 2 == 0 ? "d\(i)" : nil, policy: i % 5 == 0 ? .keep : .rollback))
        }
        // Some sent and failed: a kept failure (status, error), a transient one (attempts, when
        // next); some sent and left inflight (pending again after a reopen).
        var sent = 0
        while sent < count * 2 / 3, let m = try s.outboxNext(now: 0) {
            sent += 1
            let i = ids.firstIndex(of: m.id)!
            if i % 5 == 0 { try s.fail(m.id, transient: false, reason: "no \(i)", now: 1) }
            else if i % 3 == 1 { try s.fail(m.id, transient: true, reason: "later \(i)", now: Int64(100 * i)) }
        }
        #expect(Set(try ids.map { try s.status($0) }).count == min(count, 3))  // pending, inflight, failed
        try s.flush()
        var before = try ids.map { try s.mutation($0) }
        try s.close()
        for i in before.indices where before[i].status == .inflight { before[i].status = .pending }

        let r = try Store.open(path: path)
        defer { try? r.close() }
        let after = try ids.map { try r.mutation($0) }
        #expect(after == before)
        #expect(try r.pendingCount() == count)
    }

    @Test(arguments: [1, 31, 32, 33, 64, 100])
    func everyRecordSurvivesReopen(count: Int) throws {
        let dir = TempDir()
        let path = dir.file("store.db")
        let s = try Store.open(path: path)
        // What the file must hold, "collection/key" to JSON.
        var model: [String: String] = [:]
        func apply(_ ops: [Op]) throws {
            try s.serverApply(ops)
            for op in ops {
                switch op {
                case .put(let c, let k, let v): model["\(c)/\(k)"] = JSONWriter.string(v)
                case .delete(let c, let k): model["\(c)/\(k)"] = nil
                default: Issue.record("unexpected op")
                }
            }
        }
        // Records to overwrite or delete later, in both collections, among the new keys.
        try apply((0..<10).flatMap { i -> [Op] in
            [.put(collection: "logs", key: Key("k\(i * 7)"), value: ["old": true]), .put(collection: "é", key: Key("x\(i)"), value: ["old": true])]
        })
        try s.flush()
        var ops: [Op] = []
        for i in 0..<count {
            let c: Key = i % 4 == 0 ? "é" : "logs"
            let k = Key(i % 9 == 0 ? String(repeating: "long key ", count: i % 5) + "\(i)" : "k\(i)")
            ops.append(.put(collection: c, key: k, value: ["n": .number(Double(i)), "s": .string(String(repeating: "ü", count: i % 40))]))
        }
        ops += [0, 3, 6, 9].map { Op.delete(collection: "é", key: Key("x\($0)")) }
        ops.append(.put(collection: "logs", key: "", value: ["empty key": true]))
        try apply(ops)
        try s.close()

        let r = try Store.open(path: path)
        defer { try? r.close() }
        var found: [String: String] = [:]
        for c in ["logs", "é"] as [Key] {
            for (k, v) in try r.scan(c) { found["\(c)/\(k)"] = JSONWriter.string(v) }
        }
        #expect(found == model)
    }
}
