import Testing
import OptimistCore
import OptimistModel
import OptimistOpen

/// The writer deletes a mutation's row only when an earlier batch wrote it; whether the
/// mutation ended in the batch that would have written it or in a later one, reopen agrees.
@Suite struct EndedRowsTests {
    @Test func mutationsEndedBeforeAndAfterTheirFirstWriteStayEnded() throws {
        let dir = TempDir()
        let path = dir.file("s.optimist")
        var ids: [MutationID] = []
        try withStore(path) { (s: Store) throws in
            // Written by a flushed batch, ended in a later one: its row must go.
            let written = try s.mutate([.put(collection: "c", key: "a", value: ["v": 1])])
            try s.flush()
            try s.commit(written)
            // Created and ended in the same batch: never written, nothing to delete.
            let quick = try s.mutate([.put(collection: "c", key: "b", value: ["v": 2])])
            try s.rollback(quick)
            // Still pending, above both.
            let live = try s.mutate([.put(collection: "c", key: "c", value: ["v": 3])])
            try s.flush()
            // Ended after a reopen-style gap: written, then rolled back in the next batch.
            try s.rollback(live)
            let last = try s.mutate([.put(collection: "c", key: "d", value: ["v": 4])])
            ids = [written, quick, live, last]
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.status(ids[0]) == .committed)
            #expect(try s.status(ids[1]) == .rolledBack)
            #expect(try s.status(ids[2]) == .rolledBack)
            #expect(try s.status(ids[3]) == .pending)
            #expect(try s.pendingCount() == 1)
            #expect(try s.get("c", "a") == ["v": 1])
            #expect(try s.get("c", "b") == nil)
            #expect(try s.get("c", "c") == nil)
            // Ended in a new session: rows written before the reopen are deleted too.
            try s.commit(ids[3])
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.pendingCount() == 0)
            #expect(try s.status(ids[3]) == .committed)
            #expect(try s.confirmed("c", "d") == ["v": 4])
        }
    }

    /// A mutation handed out (so logged twice) and ended before the writer took either entry,
    /// next to one that stays in flight: the queue keeps the ended one as ended only, and the
    /// other with its latest state.
    @Test func mutationsLoggedTwiceAndEndedBeforeAnyWrite() throws {
        let dir = TempDir()
        let path = dir.file("s.optimist")
        var ids: [MutationID] = []
        try withStore(path) { (s: Store) throws in
            let ended = try s.mutate([.put(collection: "c", key: "a", value: ["v": 1])])
            let flying = try s.mutate([.put(collection: "c", key: "b", value: ["v": 2])])
            #expect(try s.outboxNext(now: 0)?.id == ended)
            #expect(try s.outboxNext(now: 0)?.id == flying)
            try s.fail(ended, transient: false, reason: "refused", now: 0)
            let committed = try s.mutate([.incr(collection: "c", key: "n", field: "x", delta: 2)])
            try s.commit(committed)
            ids = [ended, flying, committed]
        }
        try withStore(path) { (s: Store) throws in
            #expect(try s.status(ids[0]) == .rolledBack)
            #expect(try s.status(ids[2]) == .committed)
            #expect(try s.pendingCount() == 1)
            // Reopened in flight: it comes back pending, with its one send counted.
            #expect(try s.status(ids[1]) == .pending)
            #expect(try s.mutation(ids[1]).attempts == 1)
            #expect(try s.get("c", "a") == nil)
            #expect(try s.get("c", "b") == ["v": 2])
            #expect(try s.confirmed("c", "n") == ["x": 2])
        }
    }
}
