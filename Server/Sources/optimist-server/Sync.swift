import OptimistModel
import OptimistProtocol

/// The push and pull algorithms of the protocol, written once over ``Storage`` so that SQLite
/// and PostgreSQL answer alike.
struct SyncService: Sendable {
    let storage: any Storage
    let rules: RefusalRules
    /// The most changes in one pull page (`--page-size`).
    let pageSize: Int
    /// The most bytes of changes (their JSON text) in one pull page (`--page-bytes`).
    let pageBytes: Int

    /// The error of a mutation whose (client_id, id) was recorded with other ops.
    static let reusedID = "mutation id reused with different ops"

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
        let bounds = PageBounds(count: pageSize, bytes: Int64(pageBytes))
        return try await storage.read { tx in
            let space = try await tx.space(user: user)
            var from: Int64 = 0
            var reset = false
            switch Cursor.position(of: request.cursor, identity: space.identity) {
            case .start: break
            case .after(let seq) where seq <= space.seq && seq >= space.prunedSeq: from = seq
            case .after, .foreign:
                // Past the space's seq: not issued here (the database was replaced or reset).
                // Below the pruned seq: deletes it has not seen are gone. Another database's,
                // or no cursor of ours at all: it tells nothing. Each way the client's records
                // may differ from ours in ways no change will tell, so it starts over.
                reset = true
            }
            let extent = try await PageExtent.find(tx, user: user, after: from, bounds: bounds)
            let changes = extent.through > from ? try await tx.changes(user: user, after: from, through: extent.through) : []
            if extent.more {
                return PullAnswer(identity: space.identity, cursor: extent.through, more: true, reset: reset,
                                  changes: changes, outcomes: [])
            }
            // The last page: the client now holds everything up to space.seq, so outcomes of
            // its unacked mutations (whose effects are included) can be told safely.
            let outcomes = try await unackedOutcomes(tx, user: user, request)
            return PullAnswer(identity: space.identity, cursor: space.seq, more: false, reset: reset,
                              changes: changes, outcomes: outcomes)
        }
    }

    /// The recorded outcomes of a pull's unacked ids. An id the client sent a digest for that
    /// differs from the recorded one was used for other ops (the client's store was copied or
    /// restored): it hears so, not the other mutation's outcome.
    private func unackedOutcomes(_ tx: any StoreTransaction, user: String, _ request: PullRequest) async throws -> [StoredOutcome] {
        var seen = Set<Int64>()
        let ids = request.unacked.map { Int64($0) }.filter { seen.insert($0).inserted }
        guard !ids.isEmpty else { return [] }
        var sent = [Int64: [String]]()
        for (id, digest) in zip(request.unacked, request.digests) { sent[Int64(id), default: []].append(digest) }
        var outcomes = try await tx.outcomes(user: user, clientID: request.clientID, ids: ids)
        for i in outcomes.indices {
            guard let recorded = outcomes[i].digest, let digests = sent[outcomes[i].mutationID],
                  digests.contains(where: { $0 != recorded }) else { continue }
            outcomes[i].status = .rejected
            outcomes[i].error = Self.reusedID
        }
        return outcomes.sorted { $0.mutationID < $1.mutationID }
    }
}

struct PullAnswer: Sendable {
    var identity: String
    var cursor: Int64
    var more: Bool
    var reset: Bool
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
        let text = Op.encode(m.ops)
        let digest = text.utf8.withContiguousStorageIfAvailable { OpsDigest.of(bytes: $0) } ?? OpsDigest.of(m.ops)
        if let done = recorded[m.storedID] {
            // The same pair with other ops is another mutation (a copied or restored client
            // store reusing ids): refused, and what was recorded stays as it was.
            if let d = done.digest, d != digest {
                return PushResult(id: m.id, outcome: .rejected(error: SyncService.reusedID))
            }
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
        var outcome = StoredOutcome(mutationID: m.storedID, status: .ok, retry: m.storedRetry, error: nil, seq: seq,
                                    digest: digest, writtenAt: unixMilliseconds())
        let result: PushResult
        switch try await evaluate(m, encodedBytes: text.utf8.count) {
        case .refused(let error):
            outcome.status = .rejected
            outcome.error = error
            try await tx.saveOutcome(user: user, clientID: clientID, outcome)
            result = PushResult(id: m.id, outcome: .rejected(error: error))
        case .apply(let plan):
            // The writes and their outcome go under a savepoint: when the database refuses
            // one of them (a value or key it cannot hold), this mutation alone is undone and
            // rejected, and the push goes on with the next.
            let before = (cache, seq)
            try await tx.savepoint()
            do {
                let ops = try await write(plan, outcome: &outcome)
                try await tx.releaseSavepoint()
                result = PushResult(id: m.id, outcome: .ok(ops: ops))
            } catch StorageError.refused(let reason) {
                try await tx.rollbackToSavepoint()
                (cache, seq) = before
                let error = "the database refused this mutation: \(reason)"
                outcome = StoredOutcome(mutationID: m.storedID, status: .rejected, retry: m.storedRetry, error: error,
                                        seq: seq, digest: digest, writtenAt: outcome.writtenAt)
                try await tx.saveOutcome(user: user, clientID: clientID, outcome)
                result = PushResult(id: m.id, outcome: .rejected(error: error))
            }
        }
        recorded[m.storedID] = outcome
        return result
    }

    /// What evaluating a mutation decided: a server answers a push with these two (`retry` is
    /// a client's to hear from servers that shed load, not this one's).
    private enum Evaluated {
        /// It applies: the new value of each record it touches, in first-touch order.
        case apply([(RecordID, Record?)])
        case refused(String)
    }

    private mutating func evaluate(_ m: PushedMutation, encodedBytes: Int) async throws -> Evaluated {
        if let violation = MutationLimits.violation(of: m.ops, encodedBytes: encodedBytes) {
            return .refused("over the server's limits: \(violation)")
        }
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
        return .apply(order.map { ($0, working[$0]!) })
    }

    /// Writes an evaluated mutation's records and its ok outcome; returns the absolute ops of
    /// the records it touched.
    private mutating func write(_ plan: [(RecordID, Record?)], outcome: inout StoredOutcome) async throws -> [Op] {
        let writeSeq = seq + 1
        var wrote = false
        for (id, new) in plan {
            var row = cache[id]!
            // Deleting what never existed leaves nothing to tell anyone.
            if new == nil && !row.exists { continue }
            row.value = new
            row.version += 1
            row.exists = true
            let text = new.map { JSONWriter.string($0) }
            try await tx.saveRecord(user: user, coll: id.coll.string, key: id.key.string,
                                    StoredRecord(value: text, version: row.version, seq: writeSeq,
                                                 changeBytes: ChangeSize.of(coll: id.coll.string, key: id.key.string, value: text),
                                                 writtenAt: outcome.writtenAt))
            cache[id] = row
            wrote = true
        }
        if wrote { seq = writeSeq }
        outcome.seq = seq
        try await tx.saveOutcome(user: user, clientID: clientID, outcome)
        return plan.map { absoluteOp($0.0, cache[$0.0]!.value) }
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
