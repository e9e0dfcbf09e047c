import OptimistModel
import OptimistProtocol

/// The push and pull algorithms of the protocol, written once over ``Storage`` so that SQLite
/// and PostgreSQL answer alike.
struct SyncService: Sendable {
    let storage: any Storage
    let rules: RefusalRules
    let pageSize: Int

    /// Processes a push in one transaction: every mutation in order, each all or nothing.
    /// Nothing is answered before the commit, so a crash before it loses nothing that was
    /// acknowledged (the client sends again).
    func push(user: String, _ request: PushRequest) async throws -> [PushResult] {
        let rules = self.rules
        return try await storage.write { tx in
            var session = try await PushSession(tx: tx, user: user, clientID: request.clientID, rules: rules,
                                                ids: request.mutations.map(\.storedID))
            var results = [PushResult]()
            results.reserveCapacity(request.mutations.count)
            for m in request.mutations { results.append(try await session.handle(m)) }
            try await session.finish()
            return results
        }
    }

    /// Answers a pull from one consistent snapshot.
    func pull(user: String, _ request: PullRequest) async throws -> PullAnswer {
        let pageSize = self.pageSize
        // Checked before the transaction: a bad request is the client's, not the database's.
        let cursor = try request.seqCursor()
        return try await storage.read { tx in
            let spaceSeq = try await tx.spaceSeq(user: user)
            // A cursor past the space's seq was not issued by this database (it was reset or
            // replaced): start over rather than wait for ever for seqs that will not come.
            var from = cursor ?? 0
            if from > spaceSeq { from = 0 }
            let rows = try await tx.changes(user: user, after: from, limit: pageSize + 1)
            if rows.count > pageSize {
                // Cut short. One mutation's writes share a seq, and a page never splits them,
                // so a client never holds half of a mutation's effect.
                let last = rows[pageSize - 1].seq
                var page = Array(rows.prefix(pageSize))
                if rows[pageSize].seq == last {
                    page.removeAll { $0.seq == last }
                    page += try await tx.changes(user: user, at: last)
                }
                return PullAnswer(cursor: last, more: true, changes: page, outcomes: [])
            }
            // The last page: the client now holds everything up to spaceSeq, so outcomes of
            // its unacked mutations (whose effects are included) can be told safely.
            var seen = Set<Int64>()
            let ids = request.unacked.map { Int64($0) }.filter { seen.insert($0).inserted }
            let outcomes = ids.isEmpty ? [] : try await tx.outcomes(user: user, clientID: request.clientID, ids: ids)
            return PullAnswer(cursor: spaceSeq, more: false, changes: rows,
                              outcomes: outcomes.sorted { $0.mutationID < $1.mutationID })
        }
    }
}

struct PullAnswer: Sendable {
    var cursor: Int64
    var more: Bool
    var changes: [StoredChange]
    var outcomes: [StoredOutcome]
}

/// A record as one push request sees it (read once, then kept up to date by its own writes:
/// the space lock guarantees nobody else writes this user's records meanwhile).
private struct CachedRecord {
    var value: Record?
    var version: Int64
    /// Whether a row (maybe a tombstone) exists.
    var exists: Bool
}

private struct RecordID: Hashable {
    // Keys compare bytewise (String would fold "é" and "e\u{301}" together; the database
    // does not).
    let coll: Key
    let key: Key
    init(_ op: Op) { coll = op.collection; key = op.key }
}

/// The state of one push request inside its transaction.
private struct PushSession {
    let tx: any StoreTransaction
    let user: String
    let clientID: String
    let rules: RefusalRules
    var seq: Int64
    let startSeq: Int64
    var recorded: [Int64: StoredOutcome]
    var cache: [RecordID: CachedRecord] = [:]

    init(tx: any StoreTransaction, user: String, clientID: String, rules: RefusalRules, ids: [Int64]) async throws {
        self.tx = tx
        self.user = user
        self.clientID = clientID
        self.rules = rules
        // First of all: the lock. Everything read below is then current and stays so.
        seq = try await tx.lockSpace(user: user)
        startSeq = seq
        let unique = Array(Set(ids))
        let found = unique.isEmpty ? [] : try await tx.outcomes(user: user, clientID: clientID, ids: unique)
        recorded = Dictionary(found.map { ($0.mutationID, $0) }, uniquingKeysWith: { a, _ in a })
    }

    mutating func finish() async throws {
        if seq != startSeq { try await tx.setSpaceSeq(user: user, seq: seq) }
    }

    /// One mutation's answer: applied (now or before), with the absolute ops of the records it
    /// touched as they are now; or rejected.
    mutating func handle(_ m: PushedMutation) async throws -> PushResult {
        if let done = recorded[m.storedID] {
            switch done.status {
            case .ok:
                // Exactly once: answer again, with the records as they are now, so a late
                // duplicate answer never moves the client's confirmed state back in time.
                return PushResult(id: m.id, outcome: .ok(ops: try await currentOps(touchedBy: m.ops)))
            case .rejected where m.storedRetry <= done.retry:
                return PushResult(id: m.id, outcome: .rejected(error: done.error ?? "rejected"))
            case .rejected:
                break  // the user retried a failed change: process it again
            }
        }
        let outcome: StoredOutcome
        let result: PushResult
        switch try await process(m) {
        case .applied(let ops):
            outcome = StoredOutcome(mutationID: m.storedID, status: .ok, retry: m.storedRetry, error: nil, seq: seq)
            result = PushResult(id: m.id, outcome: .ok(ops: ops))
        case .refused(let error):
            outcome = StoredOutcome(mutationID: m.storedID, status: .rejected, retry: m.storedRetry, error: error, seq: seq)
            result = PushResult(id: m.id, outcome: .rejected(error: error))
        }
        try await tx.saveOutcome(user: user, clientID: clientID, outcome)
        recorded[m.storedID] = outcome
        return result
    }

    /// What processing a mutation did: a server answers a push with these two (`retry` is a
    /// client's to hear from servers that shed load, not this one's).
    private enum Processed {
        /// Applied: the absolute ops of the records it touched.
        case applied([Op])
        case refused(String)
    }

    private mutating func process(_ m: PushedMutation) async throws -> Processed {
        if let refusal = rules.refusal(for: m.ops) {
            return .refused("refused by rule: \(refusal)")
        }
        // PostgreSQL text cannot hold U+0000; refuse such names in every store alike.
        if m.ops.contains(where: { $0.collection.string.utf8.contains(0) || $0.key.string.utf8.contains(0) }) {
            return .refused("coll and key must not contain U+0000")
        }
        // Evaluate every op first (later ops see earlier ones); write only if all apply.
        var working: [RecordID: Record?] = [:]
        var order: [RecordID] = []
        for op in m.ops {
            let id = RecordID(op)
            let current: Record?
            if let w = working[id] {
                current = w
            } else {
                current = try await load(id).value
                order.append(id)
            }
            switch op.apply(to: current) {
            case .success(let new): working[id] = .some(new)
            case .failure(let error): return .refused(error.message)
            }
        }
        let writeSeq = seq + 1
        var wrote = false
        for id in order {
            var row = cache[id]!
            let new = working[id]!
            // Deleting what never existed leaves nothing to tell anyone.
            if new == nil && !row.exists { continue }
            row.value = new
            row.version += 1
            row.exists = true
            cache[id] = row
            try await tx.saveRecord(user: user, coll: id.coll.string, key: id.key.string,
                                    StoredRecord(value: new.map { JSONWriter.string($0) }, version: row.version, seq: writeSeq))
            wrote = true
        }
        if wrote { seq = writeSeq }
        return .applied(order.map { absoluteOp($0, cache[$0]!.value) })
    }

    private mutating func currentOps(touchedBy ops: [Op]) async throws -> [Op] {
        var seen = Set<RecordID>()
        var out = [Op]()
        for op in ops {
            let id = RecordID(op)
            guard seen.insert(id).inserted else { continue }
            out.append(absoluteOp(id, try await load(id).value))
        }
        return out
    }

    private func absoluteOp(_ id: RecordID, _ value: Record?) -> Op {
        if let value { .put(collection: id.coll, key: id.key, value: value) } else { .delete(collection: id.coll, key: id.key) }
    }

    private mutating func load(_ id: RecordID) async throws -> CachedRecord {
        if let hit = cache[id] { return hit }
        var row = CachedRecord(value: nil, version: 0, exists: false)
        if let stored = try await tx.record(user: user, coll: id.coll.string, key: id.key.string) {
            row.exists = true
            row.version = stored.version
            if let text = stored.value {
                do { row.value = try JSONParser.parseObject(text) } catch {
                    throw StorageError.failed("stored record \(id.coll)/\(id.key) is not a JSON object: \(error)")
                }
            }
        }
        cache[id] = row
        return row
    }
}
