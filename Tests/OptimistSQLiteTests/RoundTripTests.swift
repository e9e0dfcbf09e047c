#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel
import OptimistCore

/// Everything a store keeps survives close and reopen.
@Suite struct RoundTripTests {
    /// A store with something of every kind: confirmed records, pending, inflight, failed and
    /// backing-off mutations, dedupe keys, policies, committed and rolled-back ids, loaded ranges.
    func populate(_ s: Store) throws -> (ids: [MutationID], ended: [MutationID: MutationStatus]) {
        try s.serverApply([
            .put(collection: "habits", key: "h1", value: ["name": "run"]),
            .put(collection: "habits", key: "h9", value: ["name": "old", "n": 1]),
            .put(collection: "stats", key: "today", value: ["count": 5]),
        ])
        let a = try s.mutate([.patch(collection: "habits", key: "h1", value: ["done": true])])
        let b = try s.mutate([.incr(collection: "stats", key: "today", field: "count", delta: 1)], dedupeKey: "x")
        let c = try s.mutate([.put(collection: "habits", key: "h2", value: ["name": "read", "tags": ["a", "é"]])],
                             dedupeKey: "c-key", policy: .keep)
        let d = try s.mutate([.delete(collection: "habits", key: "h9"),
                              .incr(collection: "stats", key: "today", field: "count", delta: 2.5)])
        let e = try s.mutate([.put(collection: "habits", key: "h3", value: ["name": "gone"])])
        let f = try s.mutate([.patch(collection: "habits", key: "h1", value: ["note": "later"])], dedupeKey: "f")
        try s.rollback(e, reason: "rejected")
        #expect(try s.outboxNext(now: 0)?.id == a)   // a: inflight, 1 attempt
        #expect(try s.outboxNext(now: 0)?.id == b)
        try s.commit(b)
        #expect(try s.outboxNext(now: 0)?.id == c)
        try s.fail(c, transient: false, reason: "server says no", now: 10)   // c: failed (keep)
        #expect(try s.outboxNext(now: 0)?.id == d)
        try s.fail(d, transient: true, reason: "timeout", now: 1_000)         // d: pending, backing off
        try s.markLoaded("habits", from: "h0", to: "h5", at: 100)
        try s.markLoaded("habits", from: "h1", to: "h2", at: 50)
        try s.markLoaded("stats", from: "", to: "zzz", at: 7)
        return ([a, c, d, f], [b: .committed, e: .rolledBack])
    }

    struct Picture: Equatable {
        var clientID: String
        var visible: [String]
        var confirmed: [String]
        var pendingFlags: [Bool]
        var mutations: [MutationRecord]
        var statuses: [MutationStatus]
        var stale: [Bool]
    }

    func picture(_ s: Store, ids: [MutationID], all: ClosedRange<MutationID>) throws -> Picture {
        var p = Picture(clientID: s.clientID, visible: [], confirmed: [], pendingFlags: [], mutations: [], statuses: [], stale: [])
        for coll in ["habits", "stats"] as [Key] {
            for (k, v) in try s.scan(coll) { p.visible.append("\(coll)/\(k)=\(JSONWriter.string(v))") }
            for k in ["h1", "h2", "h3", "h9", "today"] as [Key] {
                p.confirmed.append(try s.confirmed(coll, k).map { JSONWriter.string($0) } ?? "-")
                p.pendingFlags.append(try s.isPending(coll, k))
                for now in [60, 120, 10_000] as [Int64] { p.stale.append(try s.needsReload(coll, k, now: now, maxAge: 30)) }
            }
        }
        p.mutations = try ids.map { try s.mutation($0) }
        p.statuses = try all.map { try s.status($0) }
        return p
    }

    @Test func everythingSurvivesReopen() throws {
        let dir = TempDir()
        let path = dir.file("store.db")
        let s = try Store.open(path: path)
        let (ids, ended) = try populate(s)
        var before = try picture(s, ids: ids, all: 1...6)
        try s.close()

        let r = try Store.open(path: path)
        defer { try? r.close() }
        let after = try picture(r, ids: ids, all: 1...6)
        // The one difference a reopen makes: inflight comes back pending, to be sent again.
        #expect(before.mutations[0].status == .inflight)
        before.mutations[0].status = .pending
        before.statuses[0] = .pending
        #expect(after == before)

        #expect(after.mutations[1].status == .failed && after.mutations[1].lastError == "server says no")
        #expect(after.mutations[2].nextAttemptAt >= 1_000 && after.mutations[2].attempts == 1)
        #expect(after.mutations[1].policy == .keep && after.mutations[1].dedupeKey == "c-key")
        for (id, status) in ended { #expect(try r.status(id) == status) }
        #expect(try r.pendingCount() == 4)

        // The pending list keeps its order: the outbox hands out a, then f (d is backing off).
        #expect(try r.outboxNext(now: 500)?.id == ids[0])
        #expect(try r.outboxNext(now: 500)?.id == ids[3])
        #expect(try r.outboxNext(now: 500) == nil)

        // Dedupe keys: a live one still blocks, an ended one is free.
        #expect(throws: OptimistError.duplicate(existing: ids[1])) {
            try r.mutate([.delete(collection: "x", key: "y")], dedupeKey: "c-key")
        }
        let next = try r.mutate([.incr(collection: "stats", key: "today", field: "count", delta: 1)], dedupeKey: "x")
        #expect(next == 7)   // never reuses an id, rolled back or not
    }

    /// A reopen folds a file's mutations in chunks of 4,096, on a thread of its own while the
    /// next chunk is parsed: 10,000 mutations (three chunks) of every kind, several on one key
    /// across the chunks' borders, some touching two collections, some ended, must give back
    /// exactly the state they left, views included. Also without the thread (what a restore
    /// does when none can be started): one after the other, as the switch is the process's.
    @Test(.serialized, arguments: [false, true])
    func manyChunksOfMutationsSurviveReopen(threadless: Bool) throws {
        ChunkFolder.threadless.store(threadless, ordering: .relaxed)
        defer { ChunkFolder.threadless.store(false, ordering: .relaxed) }
        let dir = TempDir()
        let path = dir.file("chunks.db")
        let s = try Store.open(path: path)
        var confirmed = [Op]()
        for i in 0..<3_000 {
            confirmed.append(.put(collection: "a", key: Key("k\(i)"), value: ["n": .number(Double(i)), "s": "confirmed"]))
            if i % 3 == 0 { confirmed.append(.put(collection: "b", key: Key("k\(i)"), value: ["n": 1])) }
        }
        try s.serverApply(confirmed)
        try s.defineView("a-count", collection: "a", kind: .count)
        try s.defineView("b-sum", collection: "b", kind: .sum(field: "n"))
        try s.defineView("a-k1", collection: "a", prefix: "k1", kind: .sum(field: "n"))
        for i in 0..<10_000 {
            let k = Key("k\(i % 3_500)")   // existing keys and new ones, each touched about three times
            let ops: [Op]
            switch i % 6 {
            case 0: ops = [.put(collection: "a", key: k, value: ["n": .number(Double(-i)), "s": "put"])]
            case 1: ops = [.patch(collection: "a", key: k, value: ["s": .string("patch \(i)"), "p": true])]
            case 2: ops = [.incr(collection: "b", key: "hot", field: "n", delta: 1)]
            case 3: ops = [.delete(collection: "a", key: k)]
            case 4: ops = [.incr(collection: "a", key: k, field: "n", delta: 2),
                           .put(collection: "b", key: k, value: ["n": .number(Double(i))])]
            default: ops = [.incr(collection: "a", key: k, field: "n", delta: 1)]
            }
            let id = try s.mutate(ops, dedupeKey: i % 50 == 0 ? "d\(i)" : nil)
            if i % 97 == 0 { try s.rollback(id) }
        }
        // The server makes some numbers text: the pending incrs on them no longer apply, and
        // the fold must skip them as the store did.
        try s.serverApply((0..<200).map { .put(collection: "a", key: Key("k\($0 * 7)"), value: ["n": "text"]) })
        for _ in 0..<300 { _ = try s.outboxNext(now: 0) }   // inflight, then pending again after the reopen
        func picture(_ s: Store) throws -> [String] {
            var out = [String]()
            for coll in ["a", "b"] as [Key] {
                for (k, v) in try s.scan(coll) { out.append("\(coll)/\(k)=\(JSONWriter.string(v)) \(try s.isPending(coll, k))") }
            }
            for v in ["a-count", "b-sum", "a-k1"] { out.append("\(v)=\(try s.viewValue(v))") }
            out.append("pending \(try s.pendingCount())")
            for m in try s.mutations() {
                out.append("\(m.id) \(m.status == .inflight ? .pending : m.status) \(m.dedupeKey ?? "-") \(m.ops.count)")
            }
            return out
        }
        let before = try picture(s)
        try s.close()
        let r = try Store.open(path: path)
        defer { try? r.close() }
        let after = try picture(r)
        #expect(after.count == before.count)
        for (x, y) in zip(before, after) where x != y { Issue.record("\(x) became \(y)"); break }
        #expect(try r.outboxNext(now: 0) != nil)
    }

    @Test func viewsSeeTheSameInputsAfterReopen() throws {
        let dir = TempDir()
        let path = dir.file("views.db")
        let s = try Store.open(path: path)
        _ = try populate(s)
        try s.defineView("n", collection: "habits", kind: .count)
        try s.defineView("c", collection: "stats", kind: .sum(field: "count"))
        let before = (try s.viewValue("n"), try s.viewValue("c"))
        try s.close()
        let r = try Store.open(path: path)
        defer { try? r.close() }
        try r.defineView("n", collection: "habits", kind: .count)
        try r.defineView("c", collection: "stats", kind: .sum(field: "count"))
        #expect(try r.viewValue("n") == before.0)
        #expect(try r.viewValue("c") == before.1)
    }

    @Test func clientIDAndIDsSurviveManyReopens() throws {
        let dir = TempDir()
        let path = dir.file("ids.db")
        let first = try withStore(path) { s throws in s.clientID }
        #expect(first.count == 36)
        var last: MutationID = 0
        for round in 0..<4 {
            try withStore(path) { s throws in
                #expect(s.clientID == first)
                let id = try s.mutate([.put(collection: "c", key: Key("k\(round)"), value: ["r": .number(Double(round))])])
                #expect(id > last)
                last = id
                try s.rollback(id)   // ended before the reopen: its id still may not come back
            }
        }
        try withStore(path) { s throws in
            #expect(try s.status(last) == .rolledBack)
            #expect(try s.pendingCount() == 0)
            #expect(try s.mutate([.delete(collection: "c", key: "k")]) == last + 1)
        }
    }

    @Test func confirmedDeletesAndOddKeysRoundTrip() throws {
        let dir = TempDir()
        let path = dir.file("keys.db")
        let keys: [Key] = ["", "é", "e\u{301}", "a\u{0}b", "🙂", "2026-01-01"]
        try withStore(path) { s throws in
            for (i, k) in keys.enumerated() { try s.serverApply([.put(collection: "k", key: k, value: ["i": .number(Double(i))])]) }
            try s.serverApply([.delete(collection: "k", key: "2026-01-01")])
            try s.serverApply([.put(collection: "", key: "empty", value: [:])])
        }
        try withStore(path) { s throws in
            let got = try s.scan("k").map(\.key)
            #expect(got == keys.dropLast().sorted())
            #expect(try s.get("k", "e\u{301}") == ["i": 2])
            #expect(try s.get("", "empty") == [:])
        }
    }

    @Test func idsSkipAGapAfterAnUncleanEnd() throws {
        let dir = TempDir()
        let path = dir.file("gap.db")
        let last = try withStore(path) { s throws in try s.mutate([.put(collection: "c", key: "k", value: [:])]) }
        // A process that opens the file and is killed never closes it.
        let child = try ChildProcess(crashChild: ["hold", path])
        #expect(child.readLine(timeoutMs: 30_000) == "open")
        child.kill(SIGKILL)
        _ = child.wait()
        let afterCrash = try withStore(path) { s throws in try s.mutate([.delete(collection: "c", key: "k")]) }
        #expect(afterCrash == last + 1 + SQLiteStoreFile.idGapAfterCrash)
        // A clean close skips nothing.
        let afterClean = try withStore(path) { s throws in try s.mutate([.delete(collection: "c", key: "k")]) }
        #expect(afterClean == afterCrash + 1)
        try withStore(path) { s throws in
            #expect(try s.status(afterCrash) == .pending)
            #expect(throws: OptimistError.notFound("no mutation \(last + 1)")) { try s.status(last + 1) }
        }
    }

    @Test func pathNilIsInMemory() throws {
        let s = try Store.open(path: nil)
        try s.mutate([.put(collection: "a", key: "b", value: [:])])
        try s.flush()
        try s.close()
    }
}
