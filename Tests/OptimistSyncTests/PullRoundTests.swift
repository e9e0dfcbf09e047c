import Testing
@testable import OptimistSync
import OptimistModel
import OptimistCore
import OptimistSync
import OptimistOpen
#if canImport(Glibc)
import Glibc
#endif

/// Pull rounds: the client only ever holds states the server had, however the server cut its
/// pages, and a `reset` reply replaces the confirmed records. Driven one exchange at a time.
@Suite struct PullRoundTests {
    func machine(_ store: Store, _ server: FakeServer) throws -> SyncMachine {
        let o = try SyncOptions(url: "http://test", transport: server, pullIntervalMs: 0, maxBatch: 100,
                                backoffBaseMs: 100, backoffMaxMs: 2_000).validated()
        let m = SyncMachine(store: store, transport: server, options: o, seed: 7)
        try m.begin()
        return m
    }

    /// The server's log after mutation M wrote A and B and a later N rewrote A: A moved past B,
    /// so with one change a page the first page carries B (from M) without A.
    func serverWithMN(pageSize: Int = 1) -> FakeServer {
        let server = FakeServer()
        server.pageSize = pageSize
        server.serverApply([put("docs", "A", ["v": 1]), put("docs", "B", ["v": 1])])  // M
        server.serverApply([put("docs", "A", ["v": 2])])                                // N
        return server
    }

    /// A and B as the client's confirmed state has them: only (nil, nil) and (A2, B1) are
    /// states the server had.
    func pair(_ store: Store) throws -> (Record?, Record?) {
        (try store.confirmed("docs", "A"), try store.confirmed("docs", "B"))
    }

    func isServerState(_ p: (Record?, Record?)) -> Bool {
        (p.0 == nil && p.1 == nil) || (p.0 == ["v": 2] && p.1 == ["v": 1])
    }

    @Test(arguments: [false, true])
    func aPageCutNeverShowsBWithoutA(file: Bool) throws {
        let dir = TempDir()
        let store = file ? try Store.open(path: dir.file("s.db")) : Store()
        defer { try? store.close() }
        let seen = ChangeLog()
        try store.subscribe(collection: "docs") { seen.append($0) }
        let server = serverWithMN()
        let m = try machine(store, server)
        var steps = 0
        while m.step(now: 0) == nil, steps < 10 {
            steps += 1
            let now = try pair(store)
            #expect(isServerState(now), "after exchange \(steps): \(now)")
        }
        #expect(steps == 2)  // two pages, one exchange each
        #expect(try pair(store) == (["v": 2], ["v": 1]))
        #expect(try store.syncCursor() == "3")
        #expect(m.status().pulled == 2)
        // The listener heard of the round once, both records together, from the server.
        #expect(seen.all.count == 1)
        #expect(Set(seen.all.flatMap { $0 }.map(\.key)) == ["A", "B"])
        #expect(seen.all.flatMap { $0 }.allSatisfy { $0.cause == .server })
    }

    @Test func aResetReplacesTheConfirmedRecordsAndKeepsPendingOnes() throws {
        let store = Store()
        let server = FakeServer()
        server.pageSize = 1
        server.serverApply([put("docs", "X", ["n": 1]), put("docs", "Y", ["n": 1]), put("docs", "Z", ["n": 1])])
        let m = try machine(store, server)
        drain(m, now: 0)
        #expect(try store.syncCursor() == "3")
        #expect(try store.confirmed("docs", "X") == ["n": 1])

        // Pending edits: one on a record the new database keeps, one new record.
        try store.mutate([incr("docs", "Y", "n", 10)])
        try store.mutate([put("docs", "mine", ["n": 7])])
        // The server's database is replaced by one that has W and another Y, not X nor Z.
        server.replaceDatabase(with: [put("docs", "W", ["n": 5]), put("docs", "Y", ["n": 100])])
        // The push fails (503), so the next exchange is a pull with the old cursor, while
        // both edits are still pending.
        server.faults = [.status(503, retryAfterMs: nil)]
        #expect(m.step(now: 10) == nil)
        #expect(try store.pendingCount() == 2)
        let seen = ChangeLog()
        try store.subscribe(collection: "docs") { seen.append($0) }
        let later: Int64 = 1_000_000
        // The reset round's first page: staged, nothing changes yet.
        #expect(m.step(now: later) == nil)
        #expect(server.requests.last?.endpoint == .pull)
        #expect(try store.confirmed("docs", "X") == ["n": 1])
        #expect(try store.confirmed("docs", "W") == nil)
        #expect(seen.all.isEmpty)
        // Its last page: the confirmed records are the new database's, at once.
        #expect(m.step(now: later) == nil)
        #expect(try store.confirmed("docs", "X") == nil)
        #expect(try store.confirmed("docs", "Z") == nil)
        #expect(try store.confirmed("docs", "W") == ["n": 5])
        #expect(try store.confirmed("docs", "Y") == ["n": 100])
        #expect(try store.get("docs", "Y") == ["n": 110])   // the pending incr, rebased
        #expect(try store.get("docs", "mine") == ["n": 7])  // the pending put, kept
        #expect(try store.pendingCount() == 2)
        #expect(try store.syncCursor() == "e1.2")
        // Listeners saw the removals (and the rest) in one batch, from the server.
        #expect(seen.all.count == 1)
        let changes = seen.all.flatMap { $0 }
        #expect(changes.allSatisfy { $0.cause == .server })
        #expect(changes.contains { $0.key == "X" && $0.value == nil })
        #expect(changes.contains { $0.key == "Z" && $0.value == nil })
        #expect(changes.contains { $0.key == "W" && $0.value == ["n": 5] })
        // The pending edits then go to the new database.
        drain(m, now: later)
        #expect(try store.pendingCount() == 0)
        #expect(server.value("docs", "Y") == ["n": 110])
        #expect(server.value("docs", "mine") == ["n": 7])
        #expect(try store.get("docs", "X") == nil)
    }

    /// A reset on a one-page reply: the same replacement, without staging.
    @Test func aOnePageResetDropsWhatItDoesNotBring() throws {
        let store = Store()
        let server = FakeServer()
        server.serverApply([put("a", "1", ["n": 1]), put("b", "2", ["n": 2])])
        let m = try machine(store, server)
        drain(m, now: 0)
        server.replaceDatabase(with: [put("a", "3", ["n": 3])])
        m.wakeNow()
        drain(m, now: 1)
        #expect(try store.confirmed("a", "1") == nil)
        #expect(try store.confirmed("b", "2") == nil)
        #expect(try store.confirmed("a", "3") == ["n": 3])
        #expect(try store.syncCursor() == "e1.1")
    }

    /// The process dies mid-round (a copy of the file as the disk had it, with the store still
    /// open): the reopened store shows none of the staged pages, resumes the round from its
    /// staged cursor, and ends where the server is.
    @Test func aCrashMidRoundResumesTheRound() throws {
        let dir = TempDir()
        let path = dir.file("s.db"), copy = dir.file("crashed.db")
        let server = serverWithMN()
        server.serverApply([put("docs", "C", ["v": 1])])  // a third page
        do {
            let store = try Store.open(path: path)
            let m = try machine(store, server)
            #expect(m.step(now: 0) == nil)  // page 1 (B)
            #expect(m.step(now: 0) == nil)  // page 2 (A)
            #expect(try pair(store) == (nil, nil))
            try store.flush()
            try copyFile(path, copy)
            try copyFile(path + "-wal", copy + "-wal")
            try store.close()
        }
        let store = try Store.open(path: copy)
        defer { try? store.close() }
        #expect(try pair(store) == (nil, nil))
        #expect(try store.syncCursor() == nil)
        let before = server.requestCount
        let m = try machine(store, server)
        drain(m, now: 0)
        // The first pull after the reopen asked for the page after the staged ones.
        let resumed = server.requests[before]
        #expect(resumed.endpoint == .pull)
        #expect(resumed.body.contains(#""cursor":"3""#))
        #expect(try pair(store) == (["v": 2], ["v": 1]))
        #expect(try store.confirmed("docs", "C") == ["v": 1])
        #expect(try store.syncCursor() == "4")
        #expect(server.requestCount == before + 1)  // one page left, nothing pulled twice
    }
}

/// Copies a file byte for byte (a test's stand-in for the disk after a crash).
func copyFile(_ from: String, _ to: String) throws {
    guard let src = fopen(from, "rb") else { return }  // (no WAL: nothing to copy)
    defer { fclose(src) }
    guard let dst = fopen(to, "wb") else { throw OptimistError.io("cannot create \(to)") }
    defer { fclose(dst) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&buffer, 1, buffer.count, src)
        if n == 0 { break }
        fwrite(buffer, 1, n, dst)
    }
}
