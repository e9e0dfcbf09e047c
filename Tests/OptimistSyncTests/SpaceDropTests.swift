import Testing
import Synchronization
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistProtocol
import OptimistSync
import OptimistOpen

/// A pull reply's `drop` (protocol 2): the user left shared space `S` or was removed from it,
/// and the client removes its confirmed records of every collection `S/…`, members included,
/// before the reply's changes, on an in-memory store and on a store file alike. Driven one
/// exchange at a time, the pull replies scripted.
@Suite struct SpaceDropTests {
    func machine(_ store: Store, _ server: FakeServer) throws -> SyncMachine {
        let o = try SyncOptions(url: "http://test", transport: server, pullIntervalMs: 0, maxBatch: 100,
                                backoffBaseMs: 100, backoffMaxMs: 2_000).validated()
        let m = SyncMachine(store: store, transport: server, options: o, seed: 7)
        try m.begin()
        return m
    }

    /// Space `S`'s records (two collections, one with a `/` in its local name, and the members)
    /// beside space `T`'s and private ones whose names start like `S`'s without being in it.
    static let spaceS: [(Key, Key)] = [("S/todos", "a"), ("S/todos", "b"), ("S/$members", "u1"), ("S/lists/week", "w")]
    static let others: [(Key, Key)] = [("T/todos", "c"), ("T/$members", "u1"), ("Sx", "k"), ("S", "k"), ("todos", "k"),
                                       ("Sx/todos", "k")]

    /// A store holding every record of ``spaceS`` and ``others`` confirmed (cursor "1").
    func loadedStore(file: Bool, _ dir: TempDir) throws -> Store {
        let store = file ? try Store.open(path: dir.file("s.db")) : Store()
        let ops = (Self.spaceS + Self.others).map { put($0.0, $0.1, ["at": .string("\($0.0.string)/\($0.1.string)")]) }
        try store.syncApplyPull(changes: ops, outcomes: [], cursor: "1", more: false, reset: false)
        return store
    }

    func pullBody(cursor: String, more: Bool = false, changes: [Op] = [], drop: [String] = []) -> FakeServer.Fault {
        .body(PullReply(cursor: cursor, more: more, changes: changes, outcomes: [], drop: drop).encoded())
    }

    func confirmedKeys(_ store: Store, _ addresses: [(Key, Key)]) throws -> [String] {
        try addresses.filter { try store.confirmed($0.0, $0.1) != nil }.map { "\($0.0.string)/\($0.1.string)" }
    }

    @Test(arguments: [false, true])
    func aDropRemovesTheSpacesConfirmedRecordsAndNothingElse(file: Bool) throws {
        let dir = TempDir()
        var store = try loadedStore(file: file, dir)
        defer { try? store.close() }
        // A pending edit on one of S's records, made before the drop.
        let mine = try store.mutate([put("S/todos", "a", ["t": "mine"])])
        let seen = ChangeLog()
        try store.subscribe { seen.append($0) }
        let query = try store.query(json: #"{"collection": "S/todos"}"#)
        let deltas = ChangeLogOf<QueryDelta>()
        try query.subscribe { deltas.append($0) }
        #expect(try query.count() == 2)
        try store.defineView("sTodos", collection: "S/todos", kind: .count)
        #expect(try store.viewValue("sTodos") == 2)

        let server = FakeServer()
        server.faults = [pullBody(cursor: "2", drop: ["S"])]
        let m = try machine(store, server)
        #expect(m.step(now: 0) == nil)  // the pull at start
        #expect(server.requests.count == 1 && server.requests[0].endpoint == .pull)
        #expect(server.requests[0].body.contains(#""protocol":2"#))
        #expect(m.status().state != .error)

        #expect(try confirmedKeys(store, Self.spaceS) == [])
        #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
        #expect(try store.syncCursor() == "2")
        // The pending edit stays pending, and shows over the record the drop removed.
        #expect(try store.status(mine) == .pending)
        #expect(try store.get("S/todos", "a") == ["t": "mine"])
        #expect(try store.isPending("S/todos", "a"))
        // Listeners heard the removals in one batch, from the server; the pending record's
        // visible value did not change, so it is not among them.
        #expect(seen.all.count == 1)
        let heard = seen.all.flatMap { $0 }
        #expect(Set(heard.map { "\($0.collection.string)/\($0.key.string)" }) == ["S/todos/b", "S/$members/u1", "S/lists/week/w"])
        #expect(heard.allSatisfy { $0.cause == .server && $0.value == nil && $0.status == .confirmed })
        // The live query lost b, and kept the pending a.
        #expect(try query.rows() == [.record(key: "a", value: ["t": "mine"], status: .pending)])
        #expect(deltas.all.flatMap { $0 } == [.delete(index: 1)])
        #expect(try store.viewValue("sTodos") == 1)

        // The server later refuses the edit (the user is no longer a member): it rolls back
        // onto nothing.
        server.faults = [.body(#"{"results":[{"id":\#(mine),"status":"rejected","error":"forbidden: not a member of S"}]}"#)]
        #expect(m.step(now: 0) == nil)
        #expect(server.requests.last?.endpoint == .push)
        #expect(try store.status(mine) == .rolledBack)
        #expect(try store.get("S/todos", "a") == nil)

        if file {
            // The drop is in the file.
            try store.close()
            store = try Store.open(path: dir.file("s.db"))
            #expect(try confirmedKeys(store, Self.spaceS) == [])
            #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
        }
    }

    /// The round's first page (`more`) stages puts of S's records; its last page drops S: the
    /// round's end applies the staged pages first, and nothing of S may survive them. Without
    /// a listener a store file ends the round in the file itself, with one the store does.
    @Test(arguments: [false, true], [false, true])
    func aDropRemovesWhatAnEarlierPageOfTheRoundStaged(file: Bool, listening: Bool) throws {
        let dir = TempDir()
        let store = try loadedStore(file: file, dir)
        defer { try? store.close() }
        let seen = ChangeLog()
        if listening { try store.subscribe { seen.append($0) } }
        let server = FakeServer()
        server.faults = [
            pullBody(cursor: "2", more: true, changes: [put("S/todos", "x", ["n": 1]), put("S/todos", "a", ["n": 2]),
                                                        put("T/todos", "y", ["n": 3])]),
            pullBody(cursor: "3", drop: ["S"]),
        ]
        let m = try machine(store, server)
        #expect(m.step(now: 0) == nil)
        #expect(try store.syncPullRound() != nil)
        #expect(m.step(now: 0) == nil)
        #expect(server.requests.count == 2)
        #expect(try store.syncPullRound() == nil)
        #expect(try store.syncCursor() == "3")
        #expect(try store.confirmed("S/todos", "x") == nil)
        #expect(try confirmedKeys(store, Self.spaceS) == [])
        #expect(try store.confirmed("T/todos", "y") == ["n": 3])
        #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
        if listening {
            // One batch: S's confirmed records removed, T's new record; x never showed.
            #expect(seen.all.count == 1)
            let heard = seen.all.flatMap { $0 }
            #expect(Set(heard.map { "\($0.collection.string)/\($0.key.string)" })
                    == ["S/todos/a", "S/todos/b", "S/$members/u1", "S/lists/week/w", "T/todos/y"])
            #expect(heard.allSatisfy { $0.cause == .server })
        }
    }

    /// The drop on a page in the middle of a round: it is staged with the page, and deletes
    /// both the confirmed records and what the page before it staged; a later page of the
    /// round may bring S's records again (the user was added back).
    @Test(arguments: [false, true])
    func aDropOnAStagedPageIsStagedWithIt(file: Bool) throws {
        let dir = TempDir()
        let store = try loadedStore(file: file, dir)
        defer { try? store.close() }
        let server = FakeServer()
        server.faults = [
            pullBody(cursor: "2", more: true, changes: [put("S/todos", "x", ["n": 1])]),
            pullBody(cursor: "3", more: true, changes: [put("T/todos", "z", ["n": 2])], drop: ["S"]),
            pullBody(cursor: "4", changes: [put("S/$members", "u2", ["role": "reader"])]),
        ]
        let m = try machine(store, server)
        #expect(m.step(now: 0) == nil)
        #expect(m.step(now: 0) == nil)
        // Staged, not applied: S's records are all still there.
        #expect(try store.syncPullRound() != nil)
        #expect(try confirmedKeys(store, Self.spaceS).count == Self.spaceS.count)
        #expect(m.step(now: 0) == nil)
        #expect(try store.syncCursor() == "4")
        #expect(try store.confirmed("S/todos", "x") == nil)
        #expect(try confirmedKeys(store, Self.spaceS) == [])
        #expect(try store.confirmed("S/$members", "u2") == ["role": "reader"])
        #expect(try store.confirmed("T/todos", "z") == ["n": 2])
        #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
    }

    /// A drop and changes of the same space in one reply (the server sends the space again
    /// from scratch): the drop applies first, so exactly the reply's records of S remain.
    @Test(arguments: [false, true])
    func aDropWithTheSpacesChangesLeavesExactlyTheNewRecords(file: Bool) throws {
        let dir = TempDir()
        let store = try loadedStore(file: file, dir)
        defer { try? store.close() }
        let seen = ChangeLog()
        try store.subscribe(prefix: nil) { seen.append($0) }
        let server = FakeServer()
        server.faults = [pullBody(cursor: "2", changes: [put("S/todos", "b", ["v": 2]), put("S/$members", "u2", ["role": "owner"])],
                                  drop: ["S"])]
        let m = try machine(store, server)
        #expect(m.step(now: 0) == nil)
        #expect(try confirmedKeys(store, Self.spaceS) == ["S/todos/b"])
        #expect(try store.confirmed("S/todos", "b") == ["v": 2])
        #expect(try store.confirmed("S/$members", "u2") == ["role": "owner"])
        #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
        let heard = seen.all.flatMap { $0 }
        #expect(seen.all.count == 1)
        #expect(heard.allSatisfy { $0.cause == .server })
        let last = Dictionary(heard.map { ("\($0.collection.string)/\($0.key.string)", $0.value) }, uniquingKeysWith: { $1 })
        #expect(last == ["S/todos/a": nil, "S/todos/b": ["v": 2], "S/$members/u1": nil, "S/$members/u2": ["role": "owner"],
                         "S/lists/week/w": nil])
    }

    /// A drop of a space the store holds nothing of changes nothing (and several spaces drop
    /// in one reply).
    @Test(arguments: [false, true])
    func aDropOfUnknownSpacesChangesNothing(file: Bool) throws {
        let dir = TempDir()
        let store = try loadedStore(file: file, dir)
        defer { try? store.close() }
        let seen = ChangeLog()
        try store.subscribe { seen.append($0) }
        let server = FakeServer()
        server.faults = [pullBody(cursor: "2", drop: ["Z", "todos", "s"])]
        let m = try machine(store, server)
        #expect(m.step(now: 0) == nil)
        #expect(m.status().state != .error)
        #expect(try store.syncCursor() == "2")
        #expect(seen.all.isEmpty)
        #expect(try confirmedKeys(store, Self.spaceS).count == Self.spaceS.count)
        #expect(try confirmedKeys(store, Self.others).count == Self.others.count)
    }
}

/// Collects a listener's batches of any element across threads.
final class ChangeLogOf<T: Sendable>: @unchecked Sendable {
    private let m = Mutex<[[T]]>([])
    func append(_ b: [T]) { m.withLock { $0.append(b) } }
    var all: [[T]] { m.withLock { $0 } }
}
