#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel
import OptimistThreads

/// Local-only stores: no server, no commit loop. A mutation commits once on disk (in memory:
/// at once), a flush commits everything before it, a reopen commits what the file held
/// pending, and a failed write settles the mutations it held by their policy, evented, with
/// the reason as their last error.
@Suite struct LocalOnlyTests {
    final class Causes: @unchecked Sendable {
        private var list: [(Key, ChangeCause, RecordStatus)] = []
        private let lock = Monitor()
        func add(_ cs: [Change]) { lock.locked { list += cs.map { ($0.key, $0.cause, $0.status) } } }
        var all: [(Key, ChangeCause, RecordStatus)] { lock.locked { list } }
    }

    @Test func inMemoryEachMutationCommitsAtOnceAndThereIsNoOutbox() throws {
        let s = try Store.open(path: nil, localOnly: true)
        defer { try? s.close() }
        #expect(s.isLocalOnly)
        let heard = Causes()
        try s.subscribe { heard.add($0) }
        let id = try s.mutate([.put(collection: "habits", key: "run", value: ["count": 1])])
        #expect(try s.status(id) == .committed)
        #expect(try s.confirmed("habits", "run") == ["count": 1])
        #expect(try s.pendingCount() == 0)
        #expect(heard.all.map(\.1) == [.mutate, .commit])
        #expect(heard.all.last?.2 == .confirmed)
        #expect(throws: Store.localOnlyHasNoOutbox) { try s.outboxNext(now: 0) }
        #expect(throws: Store.localOnlyHasNoOutbox) { try s.outboxWait(timeoutMs: 0) }
    }

    @Test func onAFileAMutationCommitsOnceWrittenAndAFlushCommitsEverythingBeforeIt() throws {
        let dir = TempDir()
        let path = dir.file("local.db")
        let s = try Store.open(path: path, localOnly: true)
        let first = try s.mutate([.put(collection: "habits", key: "run", value: ["count": 1])])
        // The committing thread gets there by itself.
        #expect(try s.waitSettled(first, timeoutMs: 10_000) == .committed)
        var ids: [MutationID] = []
        for i in 0..<200 { ids.append(try s.mutate([.incr(collection: "habits", key: "run", field: "count", delta: 1)], dedupeKey: "tap-\(i)")) }
        try s.flush()
        for id in ids { #expect(try s.status(id) == .committed) }
        #expect(try s.confirmed("habits", "run") == ["count": 201])
        try s.close()

        // Opened again (not local-only): all of it confirmed, nothing pending.
        let r = try Store.open(path: path)
        defer { try? r.close() }
        #expect(try r.pendingCount() == 0)
        #expect(try r.confirmed("habits", "run") == ["count": 201])
        #expect(try r.status(ids.last!) == .committed)
    }

    @Test func mutationsTheFileHeldPendingCommitAtALocalOnlyOpen() throws {
        let dir = TempDir()
        let path = dir.file("pending.db")
        let (a, b): (MutationID, MutationID) = try withStore(path) { s in
            let a = try s.mutate([.put(collection: "notes", key: "n1", value: ["t": "hi"])])
            let b = try s.mutate([.put(collection: "notes", key: "n2", value: ["t": "yo"])])
            _ = try s.outboxNext(now: 0)   // a: inflight when the file closes
            return (a, b)
        }
        let s = try Store.open(path: path, localOnly: true)
        defer { try? s.close() }
        #expect(try s.status(a) == .committed && s.status(b) == .committed)
        #expect(try s.confirmed("notes", "n2") == ["t": "yo"])
    }

    @Test func aFailedWriteRollsBackOrKeepsByPolicyWithTheReason() throws {
        let dir = TempDir()
        let path = dir.file("full.db")
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path)
        let s = try Store(restoring: snapshot, storage: storage, sink: journal)
        try s.becomeLocalOnly()
        defer { try? s.close() }
        let saved = try s.mutate([.put(collection: "c", key: "saved", value: ["v": 1])])
        try s.flush()
        #expect(try s.status(saved) == .committed)
        let heard = Causes()
        try s.subscribe { heard.add($0) }

        journal.limitPages(1)  // no room to grow: the writer's next batch fails
        let big: Record = ["pad": .string(String(repeating: "x", count: 8000))]
        var undone: [MutationID] = []
        var kept: [MutationID] = []
        for i in 0..<20 {
            // A call may report the writer's failure itself (it then changes nothing).
            if let id = try? s.mutate([.put(collection: "big", key: Key("r\(i)"), value: big)]) { undone.append(id) }
            if let id = try? s.mutate([.put(collection: "big", key: Key("k\(i)"), value: big)], policy: .keep) { kept.append(id) }
        }
        #expect(throws: OptimistError.self) { try s.flush() }
        #expect(!undone.isEmpty && !kept.isEmpty)
        for id in undone {
            #expect(try s.waitSettled(id, timeoutMs: 10_000) == .rolledBack)
            #expect(try s.mutation(id).lastError?.contains("writing the store file failed") == true)
        }
        for id in kept {
            #expect(try s.waitSettled(id, timeoutMs: 10_000) == .failed)
            #expect(try s.mutation(id).lastError?.contains("writing the store file failed") == true)
        }
        #expect(try s.scan("big").count == kept.count)   // kept failures stay visible
        let causes = Set(heard.all.map(\.1))
        #expect(causes.contains(.rollback) && causes.contains(.fail))

        // Room again: a retried kept failure, and a new mutation, commit.
        journal.limitPages(nil)
        // The writer may be inside one last attempt under the cap, which fails: wait until its
        // writes go through, and drop the failure nobody heard of yet (a store file reports it
        // once, by its next call, which then changes nothing).
        var recovered = false
        for _ in 0..<50 where !recovered {
            do { try journal.flush(); recovered = true } catch { usleep(10_000) }
        }
        #expect(recovered)
        _ = journal.takeError()
        try s.retry(kept[0])
        let later = try s.mutate([.put(collection: "c", key: "later", value: [:])])
        try s.flush()
        #expect(try s.status(kept[0]) == .committed && s.status(later) == .committed)
        #expect(try s.status(saved) == .committed)
    }
}
