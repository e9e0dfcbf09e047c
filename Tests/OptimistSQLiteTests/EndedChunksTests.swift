#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel

/// Ended statuses are stored as 2-bit codes in chunks of 4,096 ids: they survive reopens
/// across chunk boundaries and batches, files of the first layout keep theirs when migrated,
/// and a damaged chunk is `CORRUPT`.
@Suite struct EndedChunksTests {
    /// A deterministic pseudo-random sequence (the same run every time).
    struct Dice {
        var state: UInt64
        mutating func next(_ n: UInt64) -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (state >> 33) % n
        }
    }

    enum Ending: CaseIterable { case commit, rollback, failPermanently, failKeptThenRollback }

    /// Ends `id` one of the ways a mutation can end; returns the status it must then have.
    func end(_ s: Store, _ id: MutationID, _ how: Ending) throws -> MutationStatus {
        switch how {
        case .commit:
            try s.commit(id)
            return .committed
        case .rollback:
            try s.rollback(id)
            return .rolledBack
        case .failPermanently:
            try s.fail(id, transient: false, reason: "no", now: 0)
            return .rolledBack
        case .failKeptThenRollback:
            try s.rollback(id)
            return .rolledBack
        }
    }

    func check(_ s: Store, _ expected: [MutationID: MutationStatus]) throws {
        var wrong = 0
        for (id, status) in expected where try s.status(id) != status { wrong += 1 }
        #expect(wrong == 0, "\(wrong) of \(expected.count) statuses differ")
    }

    @Test func mixedStatusesAcrossChunksBatchesAndReopens() throws {
        let dir = TempDir()
        let path = dir.file("chunks.db")
        var dice = Dice(state: 7)
        var expected: [MutationID: MutationStatus] = [:]
        var left: [(MutationID, Ending)] = []
        try withStore(path) { (s: Store) throws in
            for i in 0..<10_000 {
                let how = Ending.allCases[Int(dice.next(4))]
                let id = try s.mutate([.put(collection: "c", key: Key("k\(i % 50)"), value: ["i": .number(Double(i))])],
                                      policy: how == .failKeptThenRollback ? .keep : .rollback)
                if how == .failKeptThenRollback { try s.fail(id, transient: false, reason: "kept", now: 0) }
                // Most end at once (in the batch that would first write them); some stay
                // live past a flush and end in a later batch (their rows are deleted then).
                if dice.next(5) == 0 {
                    left.append((id, how))
                } else {
                    expected[id] = try end(s, id, how)
                }
                if dice.next(997) == 0 || i == 4_100 { try s.flush() }
                if left.count > 40 {
                    for (id, how) in left.prefix(30) { expected[id] = try end(s, id, how) }
                    left.removeFirst(30)
                }
            }
            try check(s, expected)
        }
        #expect(Set(expected.keys.map { $0 >> 12 }).count == 3)   // ids 1...10,000: three chunks
        try withStore(path) { (s: Store) throws in
            try check(s, expected)
            #expect(try s.pendingCount() == left.count)
            // End the rest in a new session (rows written before the reopen), in two batches.
            for (n, (id, how)) in left.enumerated() {
                expected[id] = try end(s, id, how)
                if n == left.count / 2 { try s.flush() }
            }
            // And some new ones, in chunks already holding codes and in a fresh one.
            for i in 0..<5_000 {
                let id = try s.mutate([.put(collection: "c", key: Key("n\(i)"), value: [:])])
                expected[id] = try end(s, id, i % 3 == 0 ? .commit : .rollback)
            }
        }
        try withStore(path) { (s: Store) throws in
            try check(s, expected)
            #expect(try s.pendingCount() == 0)
        }
    }

    /// Writes that fail (the file capped), with ended statuses in the failing batches, and
    /// are retried later keep every ended status.
    @Test func endedStatusesSurviveFailedWritesAndTheirRetry() throws {
        let dir = TempDir()
        let path = dir.file("capped.db")
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path)
        let s = try Store(restoring: snapshot, storage: storage, sink: journal)
        var expected: [MutationID: MutationStatus] = [:]
        func tap(_ i: Int) throws {
            let id = try s.mutate([.put(collection: "t", key: "k", value: ["i": .number(Double(i))])])
            if i % 2 == 0 { try s.commit(id); expected[id] = .committed } else { try s.rollback(id); expected[id] = .rolledBack }
        }
        for i in 0..<100 { try tap(i) }
        try s.flush()
        journal.limitPages(1)
        // Big pending records make the writes fail; taps go into the same failing batches.
        var big = 0, failed = false
        while big < 400, !failed {
            do {
                try tap(big)
                try s.mutate([.put(collection: "big", key: Key("b\(big)"), value: ["pad": .string(String(repeating: "x", count: 3000))])])
                big += 1
            } catch {
                failed = true
            }
            usleep(2_000)
        }
        #expect(failed)
        for i in 0..<50 { try tap(i) }
        journal.limitPages(nil)
        try s.flush()
        for i in 0..<50 { try tap(i) }
        try s.close()
        try withStore(path) { (r: Store) throws in
            try check(r, expected)
            #expect(try r.scan("big").count == big)
        }
    }

    /// The first layout, written by hand: its `ended` rows (statuses 4 committed, 5 rolled
    /// back) around chunk boundaries, live mutations and records.
    func makeVersion1(_ path: String, ended: [(Int64, Int32)], extra: String = "") {
        let live = [(8_500, Op.encode([.put(collection: "c", key: "p", value: ["v": 1])])),
                    (8_501, Op.encode([.patch(collection: "c", key: "q", value: ["w": 2])]))]
        makeSQLite(path, """
            PRAGMA application_id = \(0x4F50_544D);
            PRAGMA user_version = 1;
            CREATE TABLE meta(
                one INTEGER PRIMARY KEY CHECK (one = 1),
                client_id TEXT NOT NULL,
                next_mutation_id INTEGER NOT NULL,
                closed_cleanly INTEGER NOT NULL DEFAULT 1);
            CREATE TABLE records(
                coll TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (coll, key)) WITHOUT ROWID;
            CREATE TABLE mutations(
                id INTEGER PRIMARY KEY,
                ops TEXT NOT NULL,
                status INTEGER NOT NULL,
                attempts INTEGER NOT NULL,
                next_attempt_ms INTEGER NOT NULL,
                dedupe_key TEXT,
                policy INTEGER NOT NULL,
                last_error TEXT);
            CREATE TABLE ended(
                id INTEGER PRIMARY KEY,
                status INTEGER NOT NULL);
            CREATE TABLE loaded(
                seq INTEGER PRIMARY KEY,
                coll TEXT NOT NULL,
                from_key TEXT NOT NULL,
                to_key TEXT NOT NULL,
                at_ms INTEGER NOT NULL);
            INSERT INTO meta(one, client_id, next_mutation_id, closed_cleanly) VALUES (1, 'old-client', 9000, 1);
            INSERT INTO records VALUES ('c', 'q', '{"v":0}');
            \(live.map { "INSERT INTO mutations VALUES (\($0.0), '\($0.1)', 1, 0, 0, NULL, 0, NULL);" }.joined(separator: "\n"))
            \(ended.map { "INSERT INTO ended VALUES (\($0.0), \($0.1));" }.joined(separator: "\n"))
            \(extra)
            """)
    }

    @Test func version1FilesKeepTheirEndedStatuses() throws {
        let dir = TempDir()
        let path = dir.file("v1.db")
        var ended: [(Int64, Int32)] = (1...20).map { ($0, $0 % 3 == 0 ? 4 : 5) }
        ended += [(4_095, 4), (4_096, 5), (4_097, 4), (8_191, 5), (8_192, 4), (8_499, 5), (8_999, 4)]
        makeVersion1(path, ended: ended)
        #expect(pragma(path, "PRAGMA user_version") == 1)

        let expected = Dictionary(uniqueKeysWithValues: ended.map { (MutationID($0.0), $0.1 == 4 ? MutationStatus.committed : .rolledBack) })
        try withStore(path) { (s: Store) throws in
            try check(s, expected)
            #expect(try s.status(8_500) == .pending)
            #expect(try s.status(8_501) == .pending)
            #expect(try s.get("c", "p") == ["v": 1])
            #expect(try s.get("c", "q") == ["v": 0, "w": 2])
            #expect(try s.mutate([.delete(collection: "c", key: "p")]) == 9_000)
            try s.rollback(9_000)
        }
        #expect(pragma(path, "PRAGMA user_version") == Schema.currentVersion)   // migrated through every step to the current layout
        #expect(pragma(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ended'") == 0)
        #expect(pragma(path, "SELECT count(*) FROM ended_chunks") == 3)   // chunks 0, 1 and 2
        try withStore(path) { (s: Store) throws in
            try check(s, expected)
            #expect(try s.status(9_000) == .rolledBack)
            #expect(try s.pendingCount() == 2)
        }
        #expect(try SQLiteStoreFile.checkIntegrity(path: path) == "ok")
    }

    @Test func aVersion1FileWithALiveEndedRowIsCorruptAndLeftAsItWas() throws {
        let dir = TempDir()
        let path = dir.file("v1-bad.db")
        makeVersion1(path, ended: [(1, 4), (2, 1), (3, 5)])
        #expect(code { _ = try Store.open(path: path) } == OpenErrorTests.corrupt)
        #expect(pragma(path, "PRAGMA user_version") == 1)
        #expect(pragma(path, "SELECT count(*) FROM ended") == 3)
        #expect(pragma(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ended_chunks'") == 0)
    }

    /// A store that handed out the last id (2^53 - 1) reopens: its file holds that mutation
    /// and a next id one past it, which is its own state, not damage. The next mutate is refused.
    @Test func aStoreThatHandedOutTheLastIdReopens() throws {
        let dir = TempDir()
        let path = dir.file("last-id.db")
        try withStore(path) { (s: Store) throws in try s.mutate([.put(collection: "c", key: "k", value: [:])]) }
        makeSQLite(path, "UPDATE meta SET next_mutation_id = \((Int64(1) << 53) - 1)")
        let last = try withStore(path) { (s: Store) throws in try s.mutate([.put(collection: "c", key: "last", value: ["n": 1])]) }
        #expect(last == (1 << 53) - 1)
        let s = try Store.open(path: path)
        defer { try? s.close() }
        #expect(try s.status(last) == .pending)
        #expect(try s.get("c", "last") == ["n": 1])
        #expect(throws: OptimistError.self) { try s.mutate([.put(collection: "c", key: "k2", value: [:])]) }
    }

    @Test(arguments: [
        "UPDATE ended_chunks SET bits = x'00'",                                         // too short
        "UPDATE ended_chunks SET bits = zeroblob(1025)",                                // too long
        "UPDATE ended_chunks SET bits = x'\(String(repeating: "00", count: 1023))03'",  // code 3
        "UPDATE ended_chunks SET bits = '\(String(repeating: "a", count: 1024))'",      // text
        "INSERT INTO ended_chunks VALUES (-1, zeroblob(1024))",                         // negative chunk
        "INSERT INTO ended_chunks VALUES (\(Int64.max), zeroblob(1024))",               // ids past UInt64
        "INSERT INTO ended_chunks VALUES (\(Int64(1) << 41), zeroblob(1024))",          // ids from 2^53
        "UPDATE meta SET next_mutation_id = -1",                                        // UInt64.max
        "UPDATE meta SET next_mutation_id = \((Int64(1) << 53) + 1)",                   // past the last id's successor
        "UPDATE mutations SET id = \(Int64(1) << 53)",                                  // a live one there
    ])
    func damagedChunksAndIdsAreCorrupt(damage: String) throws {
        let dir = TempDir()
        let path = dir.file("damaged.db")
        try withStore(path) { (s: Store) throws in
            for _ in 0..<10 { try s.rollback(try s.mutate([.put(collection: "c", key: "k", value: [:])])) }
            try s.mutate([.put(collection: "c", key: "live", value: [:])])
        }
        #expect(pragma(path, "SELECT count(*) FROM ended_chunks") == 1)
        #expect(pragma(path, "SELECT count(*) FROM mutations") == 1)
        makeSQLite(path, damage)
        #expect(code { _ = try Store.open(path: path) } == OpenErrorTests.corrupt, "\(damage)")
    }

    /// Memory follows the ids that ended, not the highest: a file naming one ended id far past
    /// the others (still one a store could hand out) opens with one page for it, reads its
    /// status, and hands out the ids after it.
    @Test func aFarOffEndedIdCostsOnePage() throws {
        let dir = TempDir()
        let path = dir.file("far.db")
        try withStore(path) { (s: Store) throws in
            try s.commit(try s.mutate([.put(collection: "c", key: "k", value: [:])]))
        }
        let chunk = Int64(1) << 40                     // ids 2^52 ..< 2^52 + 4096
        // Byte 0x06: code 2 (rolled back) for the chunk's first id, code 1 (committed) for the next.
        makeSQLite(path, "INSERT INTO ended_chunks VALUES (\(chunk), x'06\(String(repeating: "00", count: 1023))')")
        let far = MutationID(chunk) << 12
        try withStore(path) { (s: Store) throws in
            #expect(try s.status(1) == .committed)
            #expect(try s.status(far) == .rolledBack)
            #expect(try s.status(far + 1) == .committed)
            let next = try s.mutate([.put(collection: "c", key: "k", value: ["n": 1])])
            #expect(next == far + 2)
            try s.commit(next)
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.status(far + 2) == .committed)
        }
    }
}
