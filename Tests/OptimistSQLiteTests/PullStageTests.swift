import Testing
@testable import OptimistCore
import OptimistOpen
@testable import OptimistSQLite
import OptimistModel
import CSQLite
import Synchronization

/// A pull round's pages staged in the store file (`pull_round`, `pull_stage`) until the round's
/// last page applies them at once.
@Suite struct PullStageTests {
    func put(_ c: Key, _ k: Key, _ n: Double) -> Op { .put(collection: c, key: k, value: ["n": .number(n)]) }

    @Test func stagedPagesLiveInTheFileUntilTheRoundsEnd() throws {
        let dir = TempDir()
        let path = dir.file("s.db")
        try withStore(path) { (s: Store) throws in
            try s.syncApplyPull(changes: [put("a", "1", 1), put("a", "2", 2)], outcomes: [], cursor: "c1", more: true, reset: false)
            try s.syncApplyPull(changes: [put("a", "1", 10), .delete(collection: "a", key: "2")], outcomes: [], cursor: "c2",
                                more: true, reset: false)
            // Nothing confirmed yet, the store's cursor unchanged; the next pull resumes at c2.
            #expect(try s.confirmed("a", "1") == nil)
            #expect(try s.syncCursor() == nil)
            #expect(try s.syncPullCursor() == "c2")
            #expect(try s.syncPullRound() == PullRound(cursor: "c2", reset: false, staged: 4))
            try s.flush()
            #expect(pragma(path, "SELECT count(*) FROM pull_stage") == 2)
            #expect(pragma(path, "SELECT staged FROM pull_round") == 4)
            #expect(pragma(path, "SELECT count(*) FROM records") == 0)
            // The last page: everything at once, later pages winning.
            try s.syncApplyPull(changes: [put("b", "3", 3)], outcomes: [], cursor: "c3", more: false, reset: false)
            #expect(try s.confirmed("a", "1") == ["n": 10])
            #expect(try s.confirmed("a", "2") == nil)
            #expect(try s.confirmed("b", "3") == ["n": 3])
            #expect(try s.syncCursor() == "c3")
            #expect(try s.syncPullRound() == nil)
            try s.flush()
        }
        #expect(pragma(path, "SELECT count(*) FROM pull_stage") == 0)
        #expect(pragma(path, "SELECT count(*) FROM pull_round") == 0)
        #expect(pragma(path, "SELECT count(*) FROM records") == 2)
    }

    /// A store closed (or killed) mid-round reopens with the round staged: nothing of it
    /// visible, the next pull resuming where it got to, and the round's end applying the pages
    /// staged before the reopen.
    @Test func aRoundStagedBeforeAReopenEndsAfterIt() throws {
        let dir = TempDir()
        let path = dir.file("s.db")
        try withStore(path) { (s: Store) throws in
            try s.syncApplyPull(changes: [put("a", "old", 1)], outcomes: [], cursor: "c0", more: false, reset: false)
            try s.syncApplyPull(changes: [put("a", "1", 1)], outcomes: [], cursor: "c1", more: true, reset: true)
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.syncPullRound() == PullRound(cursor: "c1", reset: true, staged: 1))
            #expect(try s.syncPullCursor() == "c1")
            #expect(try s.syncCursor() == "c0")
            #expect(try s.confirmed("a", "old") == ["n": 1])
            #expect(try s.confirmed("a", "1") == nil)
            let seen = Seen()
            try s.subscribe { seen.add($0) }
            // The round began with a reset: its end removes what it did not bring.
            try s.syncApplyPull(changes: [put("a", "2", 2)], outcomes: [], cursor: "c2", more: false, reset: false)
            #expect(try s.confirmed("a", "old") == nil)
            #expect(try s.confirmed("a", "1") == ["n": 1])
            #expect(try s.confirmed("a", "2") == ["n": 2])
            #expect(seen.batches == 1)
            #expect(seen.removed == ["old"])
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.syncPullRound() == nil)
            #expect(try s.syncCursor() == "c2")
            #expect(try s.confirmed("a", "old") == nil)
            #expect(try s.confirmed("a", "2") == ["n": 2])
        }
    }

    /// With nobody watching, the round ends in the file (the writer applies the staged pages a
    /// page at a time): a reset round replaces the records, pending mutations are refolded on
    /// the new ones, outcomes settle, and what was cached before answers no more.
    @Test func aResetRoundEndsInTheFileWithPendingMutationsOnTop() throws {
        let dir = TempDir()
        let path = dir.file("s.db")
        var settled: MutationID = 0
        try withStore(path) { (s: Store) throws in
            try s.syncApplyPull(changes: [put("a", "x", 1), put("a", "y", 1), put("b", "z", 1)], outcomes: [], cursor: "c0",
                                more: false, reset: false)
            try s.flush()
            #expect(try s.get("a", "x") == ["n": 1])  // cached now
            try s.mutate([.incr(collection: "a", key: "y", field: "n", delta: 10)])
            settled = try s.mutate([.put(collection: "a", key: "w", value: ["n": 5])])
            try s.syncApplyPull(changes: [put("a", "y", 100)], outcomes: [], cursor: "r1", more: true, reset: true)
            #expect(try s.get("a", "x") == ["n": 1])
            #expect(try s.get("a", "y") == ["n": 11])
            // The last page: the put of w was the server's too (its outcome says so).
            try s.syncApplyPull(changes: [put("a", "w", 5)], outcomes: [PullOutcome(id: settled, outcome: .ok, retry: 0)],
                                cursor: "r2", more: false, reset: false)
            #expect(try s.get("a", "x") == nil)
            #expect(try s.get("b", "z") == nil)
            #expect(try s.confirmed("a", "y") == ["n": 100])
            #expect(try s.get("a", "y") == ["n": 110])
            #expect(try s.isPending("a", "y"))
            #expect(try s.status(settled) == .committed)
            #expect(try s.get("a", "w") == ["n": 5])
            #expect(try s.scan("a", prefix: "").map(\.key) == ["w", "y"])
            #expect(try s.syncCursor() == "r2")
            #expect(try s.syncPullRound() == nil)
        }
        #expect(pragma(path, "SELECT count(*) FROM records") == 2)
        #expect(pragma(path, "SELECT count(*) FROM pull_stage") == 0)
        try withStore(path) { (s: Store) throws in
            #expect(try s.get("a", "y") == ["n": 110])
            #expect(try s.confirmed("a", "x") == nil)
            #expect(try s.syncCursor() == "r2")
            #expect(try s.pendingCount() == 1)
        }
    }

    /// Big rounds take the staged (reader-friendly) apply; the result is the same.
    @Test func aBigRoundAppliesThroughTheStagedChange() throws {
        let dir = TempDir()
        let path = dir.file("s.db")
        try withStore(path) { (s: Store) throws in
            try s.subscribe { _ in }  // a listener: the round ends in memory, not in the file
            for page in 0..<3 {
                let ops = (0..<1_000).map { i in put("big", Key("k\(page * 1_000 + i)"), Double(i)) }
                try s.syncApplyPull(changes: ops, outcomes: [], cursor: "p\(page)", more: page < 2, reset: false)
                #expect(try s.confirmed("big", "k0") == (page < 2 ? nil : ["n": 0]))
            }
            #expect(try s.confirmed("big", "k2999") == ["n": 999])
        }
        #expect(pragma(path, "SELECT count(*) FROM records") == 3_000)
        #expect(pragma(path, "SELECT count(*) FROM pull_stage") == 0)
    }
}

/// Listener batches, counted, and the keys they removed.
final class Seen: Sendable {
    private let state = Mutex<(batches: Int, removed: [String])>((0, []))
    func add(_ changes: [Change]) {
        state.withLock { s in
            s.batches += 1
            for c in changes where c.value == nil { s.removed.append(c.key.string) }
        }
    }
    var batches: Int { state.withLock { $0.batches } }
    var removed: [String] { state.withLock { $0.removed } }
}
