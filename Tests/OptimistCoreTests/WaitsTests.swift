import Foundation
import OptimistThreads
import Synchronization
import Testing
@testable import OptimistCore
@testable import OptimistModel

/// The app developer's waits and lookups: one mutation awaited (`waitSettled`), the outbox
/// waited on (`outboxWait`), ended mutations still readable with their reason (`mutation`),
/// and a hand-driven commit that carries the backend's renames.
@Suite struct WaitsTests {
    let s = Store()

    @Test func waitSettledReturnsTheFinalStatusOnceAnotherThreadEndsTheMutation() throws {
        let committed = try s.mutate([put("todos", "a", ["t": "milk"])])
        let undone = try s.mutate([put("todos", "b", ["t": "eggs"])])
        let kept = try s.mutate([put("todos", "c", ["t": "tea"])], policy: .keep)
        let store = s
        let thread = startThread {
            usleep(30_000)
            try? store.commit(committed)
            try? store.rollback(undone, reason: "the server said no")
            _ = try? store.outboxNext(now: 0)   // kept: inflight, then failed for good
            try? store.fail(kept, transient: false, reason: "refused", now: 0)
        }
        #expect(try s.waitSettled(committed, timeoutMs: 10_000) == .committed)
        #expect(try s.waitSettled(undone, timeoutMs: 10_000) == .rolledBack)
        #expect(try s.waitSettled(kept, timeoutMs: 10_000) == .failed)
        if let thread { joinThread(thread) }
        // Already settled: at once, also with no time to wait.
        #expect(try s.waitSettled(committed, timeoutMs: 0) == .committed)
    }

    @Test func waitSettledTimesOutWithNilAndRefusesUnknownIds() throws {
        let id = try s.mutate([put("todos", "a", [:])])
        #expect(try s.waitSettled(id, timeoutMs: 0) == nil)
        #expect(try s.waitSettled(id, timeoutMs: 20) == nil)
        #expect(try s.status(id) == .pending)
        #expect(throws: OptimistError.notFound("no mutation 99")) { try s.waitSettled(99, timeoutMs: 0) }
    }

    @Test func closingTheStoreEndsAWaitWithMisuse() throws {
        let id = try s.mutate([put("todos", "a", [:])])
        let store = s
        let thread = startThread { usleep(30_000); try? store.close() }
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.waitSettled(id, timeoutMs: 10_000) }
        if let thread { joinThread(thread) }
        #expect(throws: OptimistError.misuse("the store is closed")) { try s.outboxWait(timeoutMs: 0) }
    }

    @Test func outboxWaitWakesForAPendingMutationNotForAnInflightOne() throws {
        #expect(try s.outboxWait(timeoutMs: 0) == false)
        #expect(try s.outboxWait(timeoutMs: 20) == false)
        let store = s
        let made = Atomic<UInt64>(0)
        let thread = startThread {
            usleep(30_000)
            if let id = try? store.mutate([put("todos", "a", [:])]) { made.store(id, ordering: .releasing) }
        }
        #expect(try s.outboxWait(timeoutMs: 10_000) == true)
        if let thread { joinThread(thread) }
        let id = made.load(ordering: .acquiring)
        #expect(id != 0)
        #expect(try s.outboxNext(now: 0)?.id == id)
        #expect(try s.outboxWait(timeoutMs: 0) == false)       // inflight is not pending
        try s.fail(id, transient: true, reason: "offline", now: 0)
        #expect(try s.outboxWait(timeoutMs: 0) == true)        // backing off is pending
        #expect(try s.outboxNext(now: 0) == nil)               // ...and not yet due
    }

    @Test func mutationKeepsTheLastThousandEndedWithTheirReason() throws {
        let first = try s.mutate([put("todos", "a", [:])])
        try s.rollback(first, reason: "the title is taken")
        let ended = try s.mutation(first)
        #expect(ended.status == .rolledBack && ended.lastError == "the title is taken")
        #expect(ended.ops == [put("todos", "a", [:])])
        let second = try s.mutate([put("todos", "b", [:])])
        try s.commit(second)
        #expect(try s.mutation(second).status == .committed)
        // Still not listed: mutations() lists the not-ended ones.
        #expect(try s.mutations().isEmpty)
        // 1,000 more end: the first drops out of the ring, its status stays known.
        for i in 0..<RecentlyEnded.capacity {
            try s.commit(try s.mutate([put("todos", Key("k\(i)"), [:])]))
        }
        #expect(throws: OptimistError.self) { try s.mutation(first) }
        do { _ = try s.mutation(first) } catch { #expect(error.message.contains("rolledBack") || error.message.contains("rolled")) }
        #expect(try s.status(first) == .rolledBack)
        #expect(try s.mutation(second + 1).status == .committed)   // the oldest still kept
        #expect(throws: OptimistError.notFound("no mutation 5000")) { try s.mutation(5000) }
    }

    @Test func commitWithRenamesMovesTheRecordAndItsLaterEditsToTheServersKey() throws {
        let create = try s.mutate([put("todos", "tmp-1", ["title": "Milk"])])
        let edit = try s.mutate([patch("todos", "tmp-1", ["done": true])])
        let heard = ChangeLog()
        try s.subscribe(collection: "todos") { heard.append($0) }
        try s.commit(create, renames: [KeyRename(collection: "todos", from: "tmp-1", to: "812")])
        #expect(try s.confirmed("todos", "812") == ["title": "Milk"])
        #expect(try s.confirmed("todos", "tmp-1") == nil)
        #expect(try s.get("todos", "tmp-1") == nil)
        #expect(try s.get("todos", "812") == ["title": "Milk", "done": true])
        #expect(try s.mutation(edit).ops == [patch("todos", "812", ["done": true])])
        #expect(heard.all.count == 1 && Set(heard.all.joined().map(\.key)) == ["tmp-1", "812"])
        try s.commit(edit)
        #expect(try s.confirmed("todos", "812") == ["title": "Milk", "done": true])
    }

    @Test func aCommitWithRenamesThatCannotApplyChangesNothing() throws {
        try s.serverApply([put("todos", "812", ["title": "text"])])
        let create = try s.mutate([put("todos", "tmp-1", ["title": "Milk"])])
        #expect(throws: OptimistError.self) {
            try s.commit(create, serverOps: [incr("todos", "812", "title", 1)],
                         renames: [KeyRename(collection: "todos", from: "tmp-1", to: "812")])
        }
        #expect(try s.status(create) == .pending)
        #expect(try s.get("todos", "tmp-1") == ["title": "Milk"])
        #expect(try s.mutation(create).ops == [put("todos", "tmp-1", ["title": "Milk"])])
        #expect(throws: OptimistError.notFound("no mutation 77")) {
            try s.commit(77, renames: [KeyRename(collection: "todos", from: "a", to: "b")])
        }
    }

    @Test func renamesParseFromTheirJSONFormAndRefuseBadShapes() throws {
        let good = try JSONParser.parse(#"[{"coll":"todos","from":"tmp-1","to":"812"}]"#)
        #expect(try KeyRename.list(from: good) == [KeyRename(collection: "todos", from: "tmp-1", to: "812")])
        #expect(try KeyRename.list(from: nil).isEmpty && KeyRename.list(from: .null).isEmpty)
        for bad in [#"{"coll":"t"}"#, #"[{"coll":"t","from":"a"}]"#, #"[{"coll":"t","from":"a","to":""}]"#, #"[1]"#] {
            #expect(throws: OptimistError.self) { try KeyRename.list(from: try JSONParser.parse(bad)) }
        }
        let long = String(repeating: "k", count: Limits.maxNameBytes + 1)
        #expect(throws: OptimistError.self) {
            try KeyRename.list(from: .array([.object(["coll": "t", "from": "a", "to": .string(long)])]))
        }
    }
}
