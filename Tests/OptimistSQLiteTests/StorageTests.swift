#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import OptimistCore
import OptimistOpen
@testable import OptimistSQLite
@testable import OptimistModel
import OptimistC
import OptimistTestSupport
import CSQLite
import OptimistThreads

/// Storage that scales: confirmed records stay in the store file and are read on demand.
@Suite struct StorageTests {
    /// The model-based test on a store file with a one-byte cache (nothing is kept between
    /// calls, so every read of a confirmed record goes to the file, or to the records the
    /// writer has not written yet), reopened every 10 steps: what a reopen loads (pending
    /// mutations, persisted views) must give the same state.
    @Test(arguments: 0..<60)
    func modelWithATinyCacheAndReopens(seed: Int) throws {
        let dir = TempDir()
        let path = dir.file("model.optimist")
        var evicted = true
        let problems = try ModelRun.run(seed: seed, steps: 60, reopenEvery: 10,
                                        open: { try Store.open(path: path, cacheBytes: 1) },
                                        afterStep: { s in
                                            if s.cacheUsage.entries != 0 { evicted = false }
                                            return []
                                        })
        #expect(problems.isEmpty, "\(problems)")
        #expect(evicted)
    }

    /// The same with every server change staged (see ``Store``'s locking): its records
    /// published as a layer over the file's, then moved into the storage a chunk at a time.
    @Test(arguments: 0..<40)
    func modelWithEveryServerChangeStaged(seed: Int) throws {
        let dir = TempDir()
        let path = dir.file("model.optimist")
        let problems = try ModelRun.run(seed: seed, steps: 60, reopenEvery: 10, open: {
            let s = try Store.open(path: path, cacheBytes: 1)
            s.stagingThreshold = 1
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Live queries on a store file whose records stay on disk (a one-byte cache: every read
    /// of a confirmed record goes to the file): the same model run as in memory.
    @Test(arguments: 0..<60)
    func liveQueriesWithATinyCache(seed: Int) throws {
        let dir = TempDir()
        let path = dir.file("queries.optimist")
        let problems = try LiveQueryRun.run(seed: seed, steps: 60, open: {
            let s = try Store.open(path: path, cacheBytes: 1)
            s.stagingThreshold = seed % 2 == 0 ? 1 : s.stagingThreshold
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The same with indexes: queries opened all along the run read their first rows through
    /// the file's index entries (kept by its triggers) merged with what the writer has not
    /// written yet.
    @Test(arguments: 0..<60)
    func liveQueriesThroughIndexesWithATinyCache(seed: Int) throws {
        let dir = TempDir()
        let path = dir.file("indexed.optimist")
        let problems = try LiveQueryRun.run(seed: seed, steps: 60, indexed: true, open: {
            let s = try Store.open(path: path, cacheBytes: 1)
            s.stagingThreshold = seed % 2 == 0 ? 1 : s.stagingThreshold
            return s
        })
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Readers beside a writer on a store file see only states that existed (see
    /// ``ConsistencyRun``), with a small cache so reads reach the file.
    @Test func readersSeeOnlyWholeChangesOnAFile() throws {
        let dir = TempDir()
        let s = try Store.open(path: dir.file("consistency.optimist"), cacheBytes: 64 << 10)
        defer { try? s.close() }
        let problems = try ConsistencyRun.run(s)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The same with a thread tapping beside the staged batches; and the file, reopened, holds
    /// what the store showed at its close (the batches' records and the taps made between
    /// their steps, in order).
    @Test func readersSeeOnlyWholeChangesBesideTapsOnAFile() throws {
        let dir = TempDir()
        let path = dir.file("taps.optimist")
        let s = try Store.open(path: path, cacheBytes: 64 << 10)
        let problems = try ConsistencyRun.run(s, tapping: true)
        #expect(problems.isEmpty, "\(problems)")
        let shown = (try s.scan("p"), try s.scan("t"), try s.pendingCount())
        try s.close()
        let r = try Store.open(path: path)
        defer { try? r.close() }
        #expect(try r.scan("p").map { $0.key } == shown.0.map { $0.key })
        #expect(try r.scan("p").map { $0.value } == shown.0.map { $0.value })
        #expect(try r.scan("t").map { $0.value } == shown.1.map { $0.value })
        #expect(try r.pendingCount() == shown.2)
    }

    /// Opening reads no record: a store of many records opens with an empty cache, and a
    /// record comes from the file when first read.
    @Test func openReadsNoRecordAndReadsOnDemand() throws {
        let dir = TempDir()
        let path = dir.file("big.optimist")
        try withStore(path) { (s: Store) throws in
            let ops = (0..<5_000).map { put("logs", Key("k\(1_000_000 + $0)"), ["i": .number(Double($0))]) }
            try s.serverApply(ops)
            try s.defineView("all", collection: "logs", kind: .count)
            try s.defineView("sum", collection: "logs", prefix: "k10000", kind: .sum(field: "i"))
        }
        let s = try Store.open(path: path, cacheBytes: 1 << 20)
        defer { try? s.close() }
        #expect(s.cacheUsage.entries == 0)
        #expect(try s.viewValue("all") == 5_000)
        #expect(try s.viewValue("sum") == Double((0..<100).reduce(0, +)))  // k1000000…k1000099
        #expect(s.cacheUsage.entries == 0)   // views come from the file, not from the records
        #expect(try s.get("logs", "k1002500") == ["i": 2500])
        #expect(s.cacheUsage.entries == 1)
        #expect(try s.scan("logs", prefix: "k100250", limit: 3).map(\.key) == ["k1002500", "k1002501", "k1002502"])
    }

    /// Reads that reach the file (a cache miss, a scan, a view defined over the file's rows)
    /// go through a connection of their own: they complete while the writer's connection is
    /// held, as it is through a long commit. (With one shared connection they waited for it.)
    @Test func readsDoNotWaitForTheWriterConnection() throws {
        let dir = TempDir()
        let path = dir.file("two.optimist")
        try withStore(path) { (s: Store) throws in
            try s.serverApply((0..<1_000).map { put("logs", Key("k\(1_000 + $0)"), ["i": .number(Double($0))]) })
        }
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path, cacheBytes: 1)
        let s = try Store(restoring: snapshot, storage: storage, sink: journal)
        defer { try? s.close() }
        let done = Monitor()
        nonisolated(unsafe) var finished = false
        nonisolated(unsafe) var seen: (Record?, [Key], Double)?
        let reader = startThread {
            let got = try? s.get("logs", "k1500")
            let keys = (try? s.scan("logs", prefix: "k150", limit: 3))?.map(\.key) ?? []
            try? s.defineView("n", collection: "logs", kind: .count)
            let count = (try? s.viewValue("n")) ?? -1
            done.locked { seen = (got, keys, count); finished = true; done.broadcast() }
        }
        try #require(reader != nil)
        journal.holdingWriterConnection {
            var waited = 0
            done.locked { while !finished && waited < 30 { done.wait(milliseconds: 1_000); waited += 1 } }
            #expect(finished, "a read waited for the writer's connection")
        }
        pthread_join(reader!, nil)
        #expect(seen?.0 == ["i": 500])
        #expect(seen?.1 == ["k1500", "k1501", "k1502"])
        #expect(seen?.2 == 1_000)
    }

    /// An open store keeps the WAL index in memory (no `-shm` file beside it), and the file
    /// is refused to a second opener and to an integrity check in this process while open.
    @Test func anOpenFileHasNoSharedMemoryFileAndIsHeldInProcess() throws {
        let dir = TempDir()
        let path = dir.file("held.optimist")
        let s = try Store.open(path: path)
        try s.serverApply([put("c", "k", ["n": 1])])
        try s.flush()
        #expect(access(path + "-shm", F_OK) != 0)
        #expect(throws: OptimistError.self) { _ = try Store.open(path: path) }
        #expect(throws: OptimistError.self) { _ = try SQLiteStoreFile.checkIntegrity(path: path) }
        try s.close()
        #expect(try SQLiteStoreFile.checkIntegrity(path: path) == "ok")
        let again = try Store.open(path: path)
        #expect(try again.get("c", "k") == ["n": 1])
        try again.close()
    }

    /// A reopen reads the records its pending mutations touch in bulk (a JSON list of keys per
    /// query): keys that need escaping in JSON, keys beyond one query's chunk, keys with no
    /// record and a key with a NUL byte all come back as the file has them.
    @Test func aReopenReadsTouchedRecordsInBulk() throws {
        let dir = TempDir()
        let path = dir.file("bulk.optimist")
        let odd: [Key] = ["quote\"d", "back\\slash", "new\nline", "tab\t", "é-ü-日本", "nul\u{0}key", "emoji-🙂", ""]
        let plain = (0..<9_000).map { Key("k\($0)") }
        try withStore(path) { (s: Store) throws in
            try s.serverApply((odd + plain).enumerated().map { put("c", $1, ["n": .number(Double($0))]) })
            // Pending mutations: an incr on every odd key, on every third plain key, and on
            // keys with no record (which the incr creates).
            for k in odd { try s.mutate([.incr(collection: "c", key: k, field: "n", delta: 1000)]) }
            for k in plain.enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
                try s.mutate([.incr(collection: "c", key: k, field: "n", delta: 1000)])
            }
            try s.mutate([.incr(collection: "c", key: "missing", field: "n", delta: 5)])
            // Beyond the collection's highest key, and in a collection the file has no row of.
            try s.mutate([.incr(collection: "c", key: "日本-later", field: "n", delta: 6)])
            try s.mutate([.incr(collection: "none", key: "k", field: "n", delta: 7)])
        }
        let s = try Store.open(path: path)
        defer { try? s.close() }
        #expect(try s.pendingCount() == odd.count + 3_000 + 3)
        for (i, k) in odd.enumerated() {
            #expect(try s.get("c", k) == ["n": .number(Double(i + 1000))], "\(k)")
            #expect(try s.confirmed("c", k) == ["n": .number(Double(i))], "\(k)")
        }
        for (i, k) in plain.enumerated() {
            let n = Double(odd.count + i) + (i % 3 == 0 ? 1000 : 0)
            #expect(try s.get("c", k) == ["n": .number(n)], "\(k)")
        }
        #expect(try s.get("c", "missing") == ["n": 5])
        #expect(try s.confirmed("c", "missing") == nil)
        #expect(try s.get("c", "日本-later") == ["n": 6])
        #expect(try s.get("none", "k") == ["n": 7])
    }

    /// A read of a key outside the keys its collection has in the file costs no query; the
    /// bounds that decide it follow every record the store confirms, so records put below or
    /// above them (then written, and evicted from a one-byte cache) are still found.
    @Test func keyBoundsFollowConfirmedRecords() throws {
        let dir = TempDir()
        let path = dir.file("bounds.optimist")
        try withStore(path) { (s: Store) throws in try s.serverApply([put("c", "m", ["n": 1])]) }
        let s = try Store.open(path: path, cacheBytes: 1)
        #expect(try s.get("c", "x") == nil)          // outside [m, m]: the bounds are read now
        #expect(try s.get("other", "x") == nil)      // a collection with no row
        try s.serverApply([put("c", "a", ["n": 2]), put("c", "z", ["n": 3]), put("other", "k", ["n": 4])])
        try s.flush()
        try s.mutate([put("c", "zz", ["n": 5])])     // pending: the overlay, not the bounds
        #expect(try s.get("c", "a") == ["n": 2])
        #expect(try s.get("c", "z") == ["n": 3])
        #expect(try s.get("other", "k") == ["n": 4])
        #expect(try s.confirmed("c", "zz") == nil)
        try s.serverApply([.delete(collection: "c", key: "a")])
        try s.flush()
        #expect(try s.get("c", "a") == nil)
        try s.close()
        let again = try Store.open(path: path, cacheBytes: 1)
        defer { try? again.close() }
        #expect(try again.get("c", "z") == ["n": 3])
        #expect(try again.get("c", "m") == ["n": 1])
        #expect(try again.get("c", "zz") == ["n": 5])
        #expect(try again.get("other", "k") == ["n": 4])
    }

    /// The bounds of the collection read last are kept at hand: a record confirmed beyond
    /// them, then written and evicted, is found by the next read of that same collection
    /// (no other collection read between, which would reload the bounds).
    @Test func theLastCollectionsBoundsFollowConfirmedRecords() throws {
        let dir = TempDir()
        let path = dir.file("recent-bounds.optimist")
        try withStore(path) { (s: Store) throws in try s.serverApply([put("c", "m", ["n": 1])]) }
        let s = try Store.open(path: path, cacheBytes: 1)
        defer { try? s.close() }
        #expect(try s.get("c", "x") == nil)          // outside [m, m]: c's bounds are now at hand
        try s.serverApply([put("c", "z", ["n": 2])])  // above them
        #expect(try s.get("c", "z") == ["n": 2])     // unwritten yet, or written: found either way
        try s.serverApply([put("c", "a", ["n": 3])])  // below them
        try s.flush()                                // written, and gone from the one-byte cache
        #expect(try s.get("c", "a") == ["n": 3])
        #expect(try s.get("c", "zz") == nil)         // still outside [a, z]
    }

    /// Keys are checked against the bounds by their first 16 bytes; keys that tie there with
    /// a bound (long keys with a common start, a short key and the same key with a NUL byte
    /// after it, keys that are not ASCII) are compared whole, and a bound that moves to such
    /// a key is still found. With a one-byte cache every read below goes to the file.
    @Test func keysThatShareTheirFirst16BytesWithABoundAreComparedWhole() throws {
        let dir = TempDir()
        let path = dir.file("heads.optimist")
        let long = "records/2026-11-"  // 16 bytes
        try withStore(path) { (s: Store) throws in
            try s.serverApply([put("c", Key(long + "m"), ["n": 1]), put("u", "é2", ["n": 1])])
        }
        let s = try Store.open(path: path, cacheBytes: 1)
        defer { try? s.close() }
        #expect(try s.get("c", Key(long + "a")) == nil)   // ties with both bounds' heads, below
        #expect(try s.get("c", Key(long + "m")) == ["n": 1])
        #expect(try s.get("c", Key(long)) == nil)         // a prefix of the bound: below it
        try s.serverApply([put("c", Key(long + "z"), ["n": 2]), put("c", Key(long + "b"), ["n": 3])])
        try s.flush()
        #expect(try s.get("c", Key(long + "z")) == ["n": 2])
        #expect(try s.get("c", Key(long + "b")) == ["n": 3])
        #expect(try s.get("c", Key(long + "c")) == nil)
        #expect(try s.get("c", Key(long + "zz")) == nil)
        try s.serverApply([put("c", "k", ["n": 4])])       // the lowest bound moves to a short key
        try s.serverApply([put("c", "k\u{0}", ["n": 5])]) // its head is k's
        try s.flush()
        #expect(try s.get("c", "k") == ["n": 4])
        #expect(try s.get("c", "k\u{0}") == ["n": 5])
        #expect(try s.get("c", Key(long + "z")) == ["n": 2])
        #expect(try s.get("u", "é1") == nil)               // not ASCII: heads from the bytes
        #expect(try s.get("u", "é2") == ["n": 1])
        try s.serverApply([put("u", "é3", ["n": 2])])
        try s.flush()
        #expect(try s.get("u", "é3") == ["n": 2])
        #expect(try s.get("u", "é4") == nil)
    }

    /// Defining a view over records already in the file computes it there; records the writer
    /// has not written yet (and pending ones) count as the store shows them.
    @Test func aViewDefinedOverExistingRecordsCountsWhatTheStoreShows() throws {
        let dir = TempDir()
        let path = dir.file("views.optimist")
        try withStore(path) { (s: Store) throws in
            try s.serverApply((0..<100).map { put("c", Key("a\($0)"), ["n": .number(Double($0)), "s": "text"]) })
        }
        try withStore(path) { (s: Store) throws in
            try s.serverApply([put("c", "a1", ["n": 1000]), delete("c", "a2"), put("c", "b1", ["n": 5])])  // maybe unwritten
            let id = try s.mutate([put("c", "a3", ["n": -3]), delete("c", "a4")])
            try s.defineView("n", collection: "c", prefix: "a", kind: .sum(field: "n"))
            try s.defineView("count", collection: "c", prefix: "a", kind: .count)
            try s.defineView("text", collection: "c", kind: .sum(field: "s"))
            let expected = Double((0..<100).reduce(0, +)) - 1 + 1000 - 2 - 3 + (-3) - 4
            #expect(try s.viewValue("n") == expected)
            #expect(try s.viewValue("count") == 98)
            #expect(try s.viewValue("text") == 0)   // not a number: adds 0
            try s.rollback(id)
            #expect(try s.viewValue("n") == expected + 3 + 3 + 4)
            #expect(try s.viewValue("count") == 99)
        }
        try withStore(path) { (s: Store) throws in
            let expected = Double((0..<100).reduce(0, +)) - 1 + 1000 - 2
            #expect(try s.viewValue("n") == expected)
            #expect(try s.viewValue("count") == 99)
        }
    }

    /// A scan merges the file's rows, records not yet written and the pending overlay, in key
    /// order, with limits, whatever the page size.
    @Test func scansMergeTheFileWithWhatIsInMemory() throws {
        let dir = TempDir()
        let path = dir.file("scan.optimist")
        try withStore(path) { (s: Store) throws in
            try s.serverApply((0..<10_000).map { put("c", Key("k" + String(100_000 + $0)), ["i": .number(Double($0))]) })
        }
        try withStore(path) { (s: Store) throws in
            try s.serverApply([delete("c", "k100001"), put("c", "k100002x", ["new": true])])
            _ = try s.mutate([delete("c", "k100003"), put("c", "k100004y", ["p": true]), patch("c", "k100005", ["p": true])])
            let head = try s.scan("c", prefix: "k10000", limit: 8)
            #expect(head.map(\.key) == ["k100000", "k100002", "k100002x", "k100004", "k100004y", "k100005", "k100006", "k100007"])
            #expect(head[5].value == ["i": 5, "p": true])
            #expect(try s.scan("c").count == 10_000 - 2 + 2)
            #expect(try s.scan("c", prefix: "k1099", limit: 0).count == 100)
            #expect(try s.scan("c", prefix: "nothing").isEmpty)
            #expect(try s.scan("other").isEmpty)
        }
    }

    /// A record whose bytes in the file are damaged is CORRUPT when read, and only then:
    /// every other record, scan and write still works.
    @Test func aDamagedRecordIsCorruptWhenReadAndNothingElseIsLost() throws {
        let dir = TempDir()
        let path = dir.file("damaged.optimist")
        try withStore(path) { (s: Store) throws in
            try s.serverApply((0..<100).map { put("c", Key("k\($0)"), ["i": .number(Double($0))]) })
        }
        // Damage one row behind the library's back (the store is closed).
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "UPDATE records SET value = '{\"i\": 5,' WHERE key = 'k5'", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
        try withStore(path) { (s: Store) throws in
            #expect(throws: OptimistError.self) { try s.get("c", "k5") }
            do throws(OptimistError) { _ = try s.get("c", "k5") } catch { #expect(error.code == 8) }  // CORRUPT
            #expect(try s.get("c", "k6") == ["i": 6])
            // A mutation over it fails as a whole; others go through.
            #expect(throws: OptimistError.self) { try s.mutate([put("c", "k7", [:]), patch("c", "k5", ["x": 1])]) }
            #expect(try s.get("c", "k7") == ["i": 7])
            let id = try s.mutate([put("c", "k8", ["i": 80])])
            try s.commit(id)
            #expect(try s.confirmed("c", "k8") == ["i": 80])
            // The server's put replaces it: with no view or listener on the collection, nothing
            // reads what a put replaces, so the damaged bytes are never parsed.
            try s.serverApply([put("c", "k5", ["i": 5])])
            #expect(try s.get("c", "k5") == ["i": 5])
        }
    }

    /// A cache budget of zero or less is MISUSE; an absurd one is clamped.
    @Test func cacheBudgetsAreChecked() throws {
        let dir = TempDir()
        #expect(throws: OptimistError.self) { try Store.open(path: dir.file("a.optimist"), cacheBytes: 0) }
        #expect(throws: OptimistError.self) { try Store.open(path: nil, cacheBytes: -1) }
        #expect(try Store.checkedCacheBytes(Int.max) == maximumCacheBytes)
        let s = try Store.open(path: dir.file("b.optimist"), cacheBytes: Int.max)
        try s.serverApply([put("c", "k", ["v": 1])])
        #expect(try s.get("c", "k") == ["v": 1])
        try s.close()
    }

    /// Once the file has every record a load left in memory (the writer committed them), the
    /// next call lets them all go in one step, not 256 a call over the next thousands of calls,
    /// and the records read the same from the file.
    @Test func writtenRecordsGoAtOnceWhenTheFileHasThemAll() throws {
        let dir = TempDir()
        let s = try Store.open(path: dir.file("released.optimist"))
        defer { try? s.close() }
        try s.serverApply((0..<5_000).map { put("c", Key("k\($0)"), ["i": .number(Double($0))]) })
        let unwritten = { s.withStorage { ($0 as? SQLiteStorage)?.unwrittenCount ?? -1 } }
        #expect(unwritten() > 0)  // kept until the writer has written them
        try s.flush()
        #expect(try s.get("c", "k1") == ["i": 1])  // a call: it lets go of what the file has
        #expect(unwritten() == 0)
        for i in stride(from: 0, to: 5_000, by: 499) { #expect(try s.get("c", Key("k\(i)")) == ["i": .number(Double(i))]) }
        // A record set after the load, and not written yet, stays in memory meanwhile.
        try s.serverApply([put("c", "late", ["i": -1])])
        #expect(try s.get("c", "late") == ["i": -1])
    }

    /// The cache stays within its budget however many records are read.
    @Test func theCacheStaysWithinItsBudget() throws {
        let dir = TempDir()
        let path = dir.file("budget.optimist")
        try withStore(path) { (s: Store) throws in
            try s.serverApply((0..<3_000).map { put("c", Key("k\($0)"), ["i": .number(Double($0)), "pad": .string(String(repeating: "x", count: 100))]) })
        }
        let budget = 64 << 10
        let s = try Store.open(path: path, cacheBytes: budget)
        defer { try? s.close() }
        for i in 0..<3_000 { #expect(try s.get("c", Key("k\(i)"))?["i"] == .number(Double(i))) }
        let usage = s.cacheUsage
        #expect(usage.bytes <= budget)
        #expect(usage.entries > 10)   // it does keep some
    }

    /// A store file of an earlier layout (version 3: records, no views table, ops as JSON
    /// text) opens, keeps its records and pending mutations, and is migrated to the current version (6). A
    /// mutation made then is saved packed beside the text row, and both load again.
    @Test func aVersion3FileMigrates() throws {
        let dir = TempDir()
        let path = dir.file("v3.optimist")
        var db: OpaquePointer?
        #expect(sqlite3_open(path, &db) == SQLITE_OK)
        let v3 = """
        PRAGMA application_id = 1330664525; PRAGMA user_version = 3; PRAGMA journal_mode = WAL;
        CREATE TABLE meta(one INTEGER PRIMARY KEY CHECK (one = 1), client_id TEXT NOT NULL, next_mutation_id INTEGER NOT NULL,
            closed_cleanly INTEGER NOT NULL DEFAULT 1, sync_cursor TEXT);
        CREATE TABLE records(coll TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (coll, key)) WITHOUT ROWID;
        CREATE TABLE mutations(id INTEGER PRIMARY KEY, ops TEXT NOT NULL, status INTEGER NOT NULL, attempts INTEGER NOT NULL,
            next_attempt_ms INTEGER NOT NULL, dedupe_key TEXT, policy INTEGER NOT NULL, last_error TEXT,
            retry INTEGER NOT NULL DEFAULT 0, queue_position INTEGER);
        CREATE TABLE loaded(seq INTEGER PRIMARY KEY, coll TEXT NOT NULL, from_key TEXT NOT NULL, to_key TEXT NOT NULL, at_ms INTEGER NOT NULL);
        CREATE TABLE ended_chunks(chunk INTEGER PRIMARY KEY, bits BLOB NOT NULL);
        INSERT INTO meta VALUES (1, 'client-v3', 3, 1, 'cursor-7');
        INSERT INTO records VALUES ('logs', 'a', '{"n":1}'), ('logs', 'b', '{"n":2}');
        INSERT INTO mutations VALUES (2, '[{"coll":"logs","delta":5,"field":"n","key":"b","op":"incr"}]', 1, 0, 0, NULL, 0, NULL, 0, NULL);
        """
        #expect(sqlite3_exec(db, v3, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
        try withStore(path) { (s: Store) throws in
            #expect(s.clientID == "client-v3")
            #expect(try s.get("logs", "a") == ["n": 1])
            #expect(try s.get("logs", "b") == ["n": 7])
            #expect(try s.confirmed("logs", "b") == ["n": 2])
            #expect(try s.syncCursor() == "cursor-7")
            try s.defineView("total", collection: "logs", kind: .sum(field: "n"))
            #expect(try s.viewValue("total") == 8)
            _ = try s.mutate([patch("logs", "a", ["note": "é \"packed\"", "deep": [[1.5, nil, true]]])])
        }
        #expect(pragma(path, "PRAGMA user_version") == Schema.currentVersion)
        #expect(pragma(path, "SELECT count(*) FROM mutations WHERE typeof(ops) = 'text'") == 1)
        #expect(pragma(path, "SELECT count(*) FROM mutations WHERE typeof(ops) = 'blob'") == 1)
        try withStore(path) { (s: Store) throws in
            #expect(try s.viewValue("total") == 8)
            #expect(try s.get("logs", "a") == ["n": 1, "note": "é \"packed\"", "deep": [[1.5, nil, true]]])
            #expect(try s.get("logs", "b") == ["n": 7])
            #expect(try s.pendingCount() == 2)
        }
    }
}
