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
    /// acknowledged (the client sends again). Returns the results and what the push changed
    /// (for the pokes of real time), announced in the transaction where the storage can.
    ///
    /// A push first runs in one pass: every record it touches read in one go, its writes kept
    /// and written together at the end (a few statements per push, not per mutation). When the
    /// database refuses one of those writes (a value or key it cannot hold), the transaction is
    /// rolled back and the push runs again carefully: each mutation's writes under a savepoint
    /// of their own, so that the mutation at fault alone is rejected.
    func push(user: String, _ request: PushRequest) async throws -> ([PushResult], SpaceChanges) {
        do {
            return try await push(user: user, request, careful: false)
        } catch StorageError.refused {
            return try await push(user: user, request, careful: true)
        }
    }

    private func push(user: String, _ request: PushRequest, careful: Bool) async throws -> ([PushResult], SpaceChanges) {
        let rules = self.rules
        return try await storage.write { tx in
            var session = try await PushSession(tx: tx, user: user, request: request, rules: rules, careful: careful)
            var results = [PushResult]()
            results.reserveCapacity(request.mutations.count)
            for m in request.mutations { results.append(try await session.handle(m)) }
            let changes = try await session.finish()
            if !changes.isEmpty { try await tx.announce(changes) }
            return (results, changes)
        }
    }

    /// Answers a pull from one consistent snapshot: under protocol 1, of the user's private
    /// space; under protocol 2, of it and of every shared space the user is a member of.
    func pull(user: String, _ request: PullRequest) async throws -> PullAnswer {
        let bounds = PageBounds(count: pageSize, bytes: Int64(pageBytes))
        if request.version >= 2 {
            return try await storage.read { tx in try await pullSpaces(tx, user: user, request, bounds: bounds) }
        }
        return try await storage.read { tx in
            let identity = try await tx.identity()
            let mine = SpaceID.user(user)
            let space = try await tx.space(mine)
            var from: Int64 = 0
            var reset = false
            switch Cursor.position(of: request.cursor, identity: identity) {
            case .start: break
            case .after(let seq) where seq <= space.seq && seq >= space.prunedSeq: from = seq
            case .after, .foreign:
                // Past the space's seq: not issued here (the database was replaced or reset).
                // Below the pruned seq: deletes it has not seen are gone. Another database's,
                // or no cursor of ours at all: it tells nothing. Each way the client's records
                // may differ from ours in ways no change will tell, so it starts over.
                reset = true
            }
            var used = PageUsage()
            let extent = try await PageExtent.find(tx, mine, after: from, bounds: bounds, used: &used)
            let changes = extent.through > from ? try await tx.changes(mine, after: from, through: extent.through) : []
            if extent.more {
                return PullAnswer(cursor: Cursor.text(identity: identity, seq: extent.through), more: true, reset: reset,
                                  changes: changes, outcomes: [])
            }
            // The last page: the client now holds everything up to space.seq, so outcomes of
            // its unacked mutations (whose effects are included) can be told safely.
            let outcomes = try await unackedOutcomes(tx, user: user, request)
            return PullAnswer(cursor: Cursor.text(identity: identity, seq: space.seq), more: false, reset: reset,
                              changes: changes, outcomes: outcomes)
        }
    }

    /// A protocol 2 pull. Membership and records are read in the one snapshot, so a member
    /// removed before it never gets a change of the space made after the removal, and one added
    /// gets the space whole.
    private func pullSpaces(_ tx: any StoreTransaction, user: String, _ request: PullRequest,
                            bounds: PageBounds) async throws -> PullAnswer {
        let identity = try await tx.identity()
        let mine = SpaceID.user(user)
        let own = try await tx.space(mine)
        let memberships = try await tx.memberships(user: user)
        var reset = false
        var at = Cursor.Spaces()
        switch Cursor.spacesPosition(of: request.cursor, identity: identity) {
        case .start: break
        case .foreign: reset = true  // another database's, or a protocol 1 cursor
        case .at(let c) where c.privateSeq > own.seq || c.privateSeq < own.prunedSeq: reset = true
        case .at(let c): at = c
        }
        // Spaces the client holds that the user no longer sees go; so do those whose position
        // this database cannot continue (past the space's seq, or below its pruned seq): those
        // come again from the start, after the drop, in this same round.
        var drop = [String]()
        let seen = Dictionary(memberships.map { ($0.name, $0.state) }, uniquingKeysWith: { a, _ in a })
        for (name, seq) in at.shared.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            if let state = seen[name], seq <= state.seq, seq >= state.prunedSeq { continue }
            drop.append(name)
            at.shared[name] = nil
        }
        var order: [(SpaceID, String?, SpaceState)] = [(mine, nil, own)]
        for m in memberships { order.append((.shared(m.name), m.name, m.state)) }
        var used = PageUsage()
        var changes = [StoredChange]()
        var more = false
        for (space, name, state) in order {
            let from = name.map { at.shared[$0] ?? 0 } ?? at.privateSeq
            var through = from
            if from < state.seq {
                let extent = try await PageExtent.find(tx, space, after: from, bounds: bounds, used: &used)
                if extent.through > from { changes += try await tx.changes(space, after: from, through: extent.through) }
                through = extent.through
                more = extent.more
            }
            // A space the client holds nothing of yet stays out of the cursor until its first
            // page (the space is then new to it, whatever happens meanwhile).
            if let name {
                if through > 0 || from > 0 || !more { at.shared[name] = through }
            } else {
                at.privateSeq = through
            }
            if more { break }
        }
        let cursor = Cursor.text(identity: identity, spaces: at)
        if more {
            return PullAnswer(cursor: cursor, more: true, reset: reset, changes: changes, outcomes: [], drop: drop)
        }
        let outcomes = try await unackedOutcomes(tx, user: user, request)
        return PullAnswer(cursor: cursor, more: false, reset: reset, changes: changes, outcomes: outcomes, drop: drop)
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
    var cursor: String
    var more: Bool
    var reset: Bool
    var changes: [StoredChange]
    var outcomes: [StoredOutcome]
    /// Protocol 2: shared spaces the client must drop before applying `changes`.
    var drop: [String] = []
}

/// A record as one push request sees it (read once, then kept up to date by its own writes:
/// the space locks guarantee nobody else writes these records meanwhile).
private struct CachedRecord {
    var value: Record?
    var version: Int64
    /// Whether a row (maybe a tombstone) exists.
    var exists: Bool

    init(_ id: RecordID, _ stored: StoredRecord?) throws {
        value = nil
        version = stored?.version ?? 0
        exists = stored != nil
        if let text = stored?.value {
            do { value = try JSONParser.parseObject(text) } catch {
                throw StorageError.failed("stored record \(id.coll)/\(id.key) is not a JSON object: \(error)")
            }
        }
    }
}

/// A member of a shared space, as a key of the members a push writes.
private struct MemberRef: Hashable {
    let space: String
    let user: Key
}

/// Rows kept in the order first written, each key once with its last value.
private struct OrderedWrites<K: Hashable, V> {
    private var index: [K: Int] = [:]
    private(set) var rows: [(K, V)] = []

    mutating func set(_ key: K, _ value: V) {
        if let i = index[key] {
            rows[i].1 = value
        } else {
            index[key] = rows.count
            rows.append((key, value))
        }
    }
}

/// What a push writes, kept until its end and then written in a few statements: each record
/// with its last value in the push (a pull sees only what is committed, so the states between
/// were never anyone's), each outcome, each member.
private struct WriteBuffer {
    var records = OrderedWrites<RecordID, StoredRecord>()
    var outcomes = OrderedWrites<Int64, StoredOutcome>()
    var members = OrderedWrites<MemberRef, String?>()

    func flush(_ tx: any StoreTransaction, user: String, clientID: String) async throws {
        try await tx.saveRecords(records.rows)
        try await tx.saveOutcomes(user: user, clientID: clientID, outcomes.rows.map(\.1))
        for (member, role) in members.rows { try await tx.saveMember(space: member.space, user: member.user.string, role: role) }
    }
}

private typealias RecordID = RecordRef

/// A space a push writes, as the push sees it.
private struct SpaceSession {
    var seq: Int64
    let startSeq: Int64
    /// A shared space's owners, counted when first needed.
    var owners: Int?
}

/// The state of one push request inside its transaction.
private struct PushSession {
    let tx: any StoreTransaction
    let user: String
    let clientID: String
    let rules: RefusalRules
    let version: Int
    let mine: SpaceID
    var spaces: [SpaceID: SpaceSession] = [:]
    var recorded: [Int64: StoredOutcome]
    var cache: [RecordID: CachedRecord] = [:]
    /// Users whose membership of a space this push changed (they hear of it in real time).
    var memberUsers = Set<String>()
    /// Each mutation's writes go to the database at once, under a savepoint; otherwise they are
    /// kept below and written together by ``finish()``.
    let careful: Bool
    var writes = WriteBuffer()

    init(tx: any StoreTransaction, user: String, request: PushRequest, rules: RefusalRules, careful: Bool) async throws {
        self.tx = tx
        self.user = user
        clientID = request.clientID
        self.rules = rules
        self.careful = careful
        version = request.version
        mine = .user(user)
        // First of all: the locks. Everything read below is then current and stays so. The
        // user's own space first (it serializes the user's pushes, and so their outcomes), then
        // every shared space the push names, in one order for every process.
        let seq = try await tx.lockSpace(mine)
        spaces[mine] = SpaceSession(seq: seq, startSeq: seq)
        var shared = Set<SpaceID>()
        if version >= 2 {
            for m in request.mutations {
                for op in m.ops { if let name = SpaceName.of(collection: op.collection.string) { shared.insert(.shared(name)) } }
            }
        }
        for space in shared.sorted() {
            let seq = try await tx.lockSpace(space)
            spaces[space] = SpaceSession(seq: seq, startSeq: seq)
        }
        let unique = Array(Set(request.mutations.map(\.storedID)))
        let found = unique.isEmpty ? [] : try await tx.outcomes(user: user, clientID: clientID, ids: unique)
        recorded = Dictionary(found.map { ($0.mutationID, $0) }, uniquingKeysWith: { a, _ in a })
        if !careful { try await prefetch(request) }
    }

    /// Reads every record the push's mutations touch, and the author's members record of every
    /// shared space they name, in one go.
    private mutating func prefetch(_ request: PushRequest) async throws {
        var refs = Set<RecordID>()
        for m in request.mutations {
            for op in m.ops {
                let id = recordID(op)
                refs.insert(id)
                if let membership = membership(in: id.space) { refs.insert(membership) }
            }
        }
        let list = Array(refs)
        let found = try await tx.records(list)
        for ref in list { cache[ref] = try CachedRecord(ref, found[ref]) }
    }

    /// Writes what was kept, and the spaces' new seqs; returns what the push changed.
    mutating func finish() async throws -> SpaceChanges {
        try await writes.flush(tx, user: user, clientID: clientID)
        var changes = SpaceChanges(users: memberUsers)
        for (space, s) in spaces where s.seq != s.startSeq {
            try await tx.setSpaceSeq(space, seq: s.seq)
            changes.spaces.insert(space)
        }
        return changes
    }

    /// The space an op writes in: under protocol 2 a collection `S/NAME` is the space `S`'s.
    private func space(of op: Op) -> SpaceID {
        if version >= 2, let name = SpaceName.of(collection: op.collection.string) { return .shared(name) }
        return mine
    }

    private func recordID(_ op: Op) -> RecordID { RecordID(space: space(of: op), coll: op.collection, key: op.key) }

    /// The author's members record of a shared space (nil for a private space).
    private func membership(in space: SpaceID) -> RecordID? {
        space.sharedName.map { RecordID(space: space, coll: Key(SpaceName.membersCollection(of: $0)), key: Key(user)) }
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
        var outcome = StoredOutcome(mutationID: m.storedID, status: .ok, retry: m.storedRetry, error: nil, seq: spaces[mine]!.seq,
                                    digest: digest, writtenAt: unixMilliseconds())
        let result: PushResult
        switch try await evaluate(m, encodedBytes: text.utf8.count) {
        case .refused(let error):
            outcome.status = .rejected
            outcome.error = error
            try await save(outcome)
            result = PushResult(id: m.id, outcome: .rejected(error: error))
        case .apply(let plan):
            // The writes and their outcome go under a savepoint: when the database refuses
            // one of them (a value or key it cannot hold), this mutation alone is undone and
            // rejected, and the push goes on with the next.
            if !careful {
                result = PushResult(id: m.id, outcome: .ok(ops: try await write(plan, outcome: &outcome)))
                recorded[m.storedID] = outcome
                return result
            }
            let before = (cache, spaces, memberUsers)
            try await tx.savepoint()
            do {
                let ops = try await write(plan, outcome: &outcome)
                try await tx.releaseSavepoint()
                result = PushResult(id: m.id, outcome: .ok(ops: ops))
            } catch StorageError.refused(let reason) {
                try await tx.rollbackToSavepoint()
                (cache, spaces, memberUsers) = before
                let error = "the database refused this mutation: \(reason)"
                outcome = StoredOutcome(mutationID: m.storedID, status: .rejected, retry: m.storedRetry, error: error,
                                        seq: spaces[mine]!.seq, digest: digest, writtenAt: outcome.writtenAt)
                try await save(outcome)
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
        if version >= 2, let reserved = m.ops.lazy.compactMap({ SpaceRules.reservedName(in: $0.collection.string) }).first {
            return .refused(reserved)
        }
        // Evaluate every op first (later ops see earlier ones); write only if all apply.
        var working: [RecordID: Record?] = [:]
        var order: [RecordID] = []
        for op in m.ops {
            let id = recordID(op)
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
        let plan = order.map { ($0, working[$0]!) }
        if let refusal = try await authorize(plan) { return .refused(refusal) }
        return .apply(plan)
    }

    /// Why the user may not write what `plan` writes in shared spaces (``SpaceRules``), nil
    /// when they may.
    private mutating func authorize(_ plan: [(RecordID, Record?)]) async throws -> String? {
        var touched = [SpaceID]()
        for (id, _) in plan where id.space.isShared && !touched.contains(id.space) { touched.append(id.space) }
        for space in touched {
            let name = space.sharedName!
            let mine = membership(in: space)!
            let membersColl = mine.coll
            var writes = [SpaceRules.Write]()
            for (id, new) in plan where id.space == space {
                let isMember = id.coll == membersColl
                let before = isMember ? SpaceRules.Role(try await load(id).value) : .none
                writes.append(SpaceRules.Write(membersKey: isMember ? id.key.string : nil, before: before,
                                               after: isMember ? SpaceRules.Role(new) : .none))
            }
            let created = spaces[space]!.seq > 0
            var owners = 0
            if created {
                if spaces[space]!.owners == nil { spaces[space]!.owners = try await tx.ownerCount(space: name) }
                owners = spaces[space]!.owners!
            }
            let decision = SpaceRules.check(space: name, user: user, created: created,
                                            role: SpaceRole.of(try await load(mine).value), owners: owners, writes: writes)
            switch decision {
            case .refused(let why): return why
            case .allowed(let ownersAfter): spaces[space]!.owners = ownersAfter
            }
        }
        return nil
    }

    /// Writes an evaluated mutation's records and its ok outcome; returns the absolute ops of
    /// the records it touched. Each space it writes in moves to its next seq.
    private mutating func write(_ plan: [(RecordID, Record?)], outcome: inout StoredOutcome) async throws -> [Op] {
        var wrote = Set<SpaceID>()
        for (id, new) in plan {
            var row = cache[id]!
            // Deleting what never existed leaves nothing to tell anyone.
            if new == nil && !row.exists { continue }
            row.value = new
            row.version += 1
            row.exists = true
            let text = new.map { JSONWriter.string($0) }
            let stored = StoredRecord(value: text, version: row.version, seq: spaces[id.space]!.seq + 1,
                                      changeBytes: ChangeSize.of(coll: id.coll.string, key: id.key.string, value: text),
                                      writtenAt: outcome.writtenAt)
            if careful {
                try await tx.saveRecord(id.space, coll: id.coll.string, key: id.key.string, stored)
            } else {
                writes.records.set(id, stored)
            }
            if let name = id.space.sharedName, id.coll.string == SpaceName.membersCollection(of: name) {
                let role = SpaceRole.of(new)?.rawValue
                if careful {
                    try await tx.saveMember(space: name, user: id.key.string, role: role)
                } else {
                    writes.members.set(MemberRef(space: name, user: id.key), role)
                }
                memberUsers.insert(id.key.string)
            }
            cache[id] = row
            wrote.insert(id.space)
        }
        for space in wrote { spaces[space]!.seq += 1 }
        outcome.seq = spaces[mine]!.seq
        try await save(outcome)
        return plan.map { absoluteOp($0.0, cache[$0.0]!.value) }
    }

    private mutating func save(_ outcome: StoredOutcome) async throws {
        if careful {
            try await tx.saveOutcome(user: user, clientID: clientID, outcome)
        } else {
            writes.outcomes.set(outcome.mutationID, outcome)
        }
    }

    /// The records a mutation touched as they are now. A mutation answered again after its
    /// author left a space it wrote in is answered without them: they are no longer theirs to
    /// read (their next pull drops the space).
    private mutating func currentOps(touchedBy ops: [Op]) async throws -> [Op]? {
        var seen = Set<RecordID>()
        var out = [Op]()
        for op in ops {
            let id = recordID(op)
            guard seen.insert(id).inserted else { continue }
            if let membership = membership(in: id.space), SpaceRole.of(try await load(membership).value) == nil { return nil }
            out.append(absoluteOp(id, try await load(id).value))
        }
        return out
    }

    private func absoluteOp(_ id: RecordID, _ value: Record?) -> Op {
        if let value { .put(collection: id.coll, key: id.key, value: value) } else { .delete(collection: id.coll, key: id.key) }
    }

    private mutating func load(_ id: RecordID) async throws -> CachedRecord {
        if let hit = cache[id] { return hit }
        let row = try CachedRecord(id, try await tx.record(id.space, coll: id.coll.string, key: id.key.string))
        cache[id] = row
        return row
    }
}
