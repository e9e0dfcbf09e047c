import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

@Suite struct MemoryStorageTests {
    static func record(_ round: Int) -> Record { ["v": .number(Double(round)), "pad": .string(String(repeating: "x", count: 40))] }

    /// A staged change holds compaction back while it moves records in (each step under the
    /// state lock stays short), then builds it outside the lock and installs it in one step.
    @Test func heldBackCompactionIsBuiltApartThenInstalled() throws {
        let m = MemoryStorage()
        for i in 0..<2000 { m.setRecord("c", Key("k\(i)"), Self.record(0)) }
        let live = m.arenaBytes
        m.holdsUpkeep = true
        for round in 1...3 { for i in 0..<2000 { m.setRecord("c", Key("k\(i)"), Self.record(round)) } }
        // Three rewrites of everything and no compaction yet.
        #expect(m.arenaBytes >= 4 * live)
        let upkeep = try #require(m.prepareUpkeep())
        // Built apart: nothing changed until it is installed.
        #expect(m.arenaBytes >= 4 * live)
        m.holdsUpkeep = false
        _ = upkeep.install()
        #expect(m.arenaBytes <= live + live / 8)
        for i in 0..<2000 { #expect(try m.record("c", Key("k\(i)")) == Self.record(3)) }
        #expect(m.prepareUpkeep() == nil)
    }

    /// Without the hold, writes compact as they go: the arena stays within twice the live bytes.
    @Test func unheldWritesCompactAsTheyGo() throws {
        let m = MemoryStorage()
        for i in 0..<2000 { m.setRecord("c", Key("k\(i)"), Self.record(0)) }
        let live = m.arenaBytes
        for round in 1...3 { for i in 0..<2000 { m.setRecord("c", Key("k\(i)"), Self.record(round)) } }
        #expect(m.arenaBytes <= 2 * live + (1 << 16))
        #expect(m.prepareUpkeep() == nil)
        for i in stride(from: 0, to: 2000, by: 13) { #expect(try m.record("c", Key("k\(i)")) == Self.record(3)) }
    }

    /// A staged change prepares its moves outside the lock: room (the arena's growth, which
    /// copies it all, and the slots' rehash) and the records' bytes. The moves then never grow
    /// the arena, in a new collection or an existing one, and read back as written, deletes
    /// included.
    @Test func movesPreparedApartNeedNoGrowth() throws {
        let m = MemoryStorage()
        for i in 0..<3000 { m.setRecord("old", Key("k\(i)"), Self.record(0)) }
        m.holdsUpkeep = true
        let keys = (0..<20_000).map { Key("n\($0)") }
        var records: [RecordMove] = []
        for k in keys {
            records += [RecordMove(collection: "old", key: k, value: Self.record(1)),
                        RecordMove(collection: "new", key: k, value: Self.record(2))]
        }
        records.append(RecordMove(collection: "old", key: "k7", value: nil))
        let moves = try #require(m.prepareMoves(records))
        _ = moves.installRoom()
        let capacity = m.arenaCapacity
        for i in records.indices { moves.move(i) }
        #expect(m.arenaCapacity == capacity)
        for k in keys.prefix(200) {
            #expect(try m.record("old", k) == Self.record(1))
            #expect(try m.record("new", k) == Self.record(2))
        }
        #expect(try m.record("old", "k7") == nil)
        #expect(try m.record("old", "k8") == Self.record(0))
        let page = try m.scan("new", prefix: "n1999", after: nil, limit: 3)
        #expect(page.map(\.key) == ["n1999", "n19990", "n19991"])
    }

    /// While upkeep is held, new keys wait unmerged in the scan index (a merge inside a move's
    /// hold sorted everything); a scan meanwhile still sees them, and the upkeep merges them.
    @Test func heldBackIndexMergeIsBuiltApart() throws {
        let m = MemoryStorage()
        m.holdsUpkeep = true
        for i in 0..<10_000 { m.setRecord("c", Key("k\(100_000 + i)"), Self.record(0)) }
        let page = try m.scan("c", prefix: "k1000", after: nil, limit: 5)
        #expect(page.map(\.key) == ["k100000", "k100001", "k100002", "k100003", "k100004"])
        for i in 10_000..<20_000 { m.setRecord("c", Key("k\(100_000 + i)"), Self.record(0)) }
        let upkeep = try #require(m.prepareUpkeep())
        m.holdsUpkeep = false
        _ = upkeep.install()
        let all = try m.scan("c", prefix: "k", after: nil, limit: 100_000)
        #expect(all.count == 20_000)
        #expect(all.map(\.key) == all.map(\.key).sorted())
    }

    /// A store's storage defers its upkeep: writes never compact, merge or regrow inline;
    /// the write that makes some due says so (`upkeepDue`), and the upkeep, built apart, does
    /// it all: the arena back within its live bytes, the scan index merged, room to spare.
    @Test func deferredUpkeepIsDueThenBuiltApart() throws {
        let m = MemoryStorage()
        m.defersUpkeep = true
        for i in 0..<5000 { m.setRecord("c", Key("k\(i)"), Self.record(0)) }
        #expect(m.upkeepDue)  // 5,000 new keys: the index wants a merge
        let live = m.arenaBytes
        for round in 1...3 { for i in 0..<5000 { m.setRecord("c", Key("k\(i)"), Self.record(round)) } }
        #expect(m.arenaBytes >= 4 * live)  // nothing compacted inline
        let upkeep = try #require(m.prepareUpkeep())
        #expect(!m.upkeepDue)
        #expect(m.arenaBytes >= 4 * live)  // built apart
        _ = upkeep.install()
        #expect(m.arenaBytes <= live + live / 8)
        #expect(m.prepareUpkeep() == nil)
        for i in stride(from: 0, to: 5000, by: 7) { #expect(try m.record("c", Key("k\(i)")) == Self.record(3)) }
        let page = try m.scan("c", prefix: "k499", after: nil, limit: 3)
        #expect(page.map(\.key) == ["k499", "k4990", "k4991"])
    }

    /// A growing collection's arena and slots are regrown apart before they fill (a regrowth
    /// copies everything, which inline would land inside one write's hold).
    @Test func deferredUpkeepRegrowsBeforeTheArenaFills() throws {
        let m = MemoryStorage()
        m.defersUpkeep = true
        var grownApart = 0
        for i in 0..<60_000 {
            let before = m.arenaCapacity
            m.setRecord("c", Key("k\(i)"), Self.record(i))
            // A write that regrew the arena itself would show here; small arenas may.
            if m.arenaCapacity != before { #expect(before < 1 << 16, "write \(i) regrew an arena of \(before) bytes") }
            if m.upkeepDue, let upkeep = m.prepareUpkeep() {
                let capacity = m.arenaCapacity
                _ = upkeep.install()
                if m.arenaCapacity > capacity { grownApart += 1 }
            }
        }
        #expect(grownApart > 0)
        #expect(try m.record("c", "k59999") == Self.record(59_999))
        #expect(try m.scan("c", prefix: "k", after: nil, limit: 100_000).count == 60_000)
    }

    /// A store defers its storage's upkeep and runs it after each change that made it due:
    /// an in-memory store rewritten over and over keeps its arena within twice its live bytes.
    @Test func storeRunsTheDeferredUpkeep() throws {
        let s = Store()
        func write(_ round: Int) throws {
            for i in 0..<3000 {
                let id = try s.mutate([.put(collection: "c", key: Key("k\(i)"), value: Self.record(round))])
                try s.commit(id)
            }
        }
        for round in 0...6 { try write(round) }
        let fresh = MemoryStorage()
        for i in 0..<3000 { fresh.setRecord("c", Key("k\(i)"), Self.record(6)) }
        let arena = s.withStorage { ($0 as! MemoryStorage).arenaBytes }
        #expect(arena <= 2 * fresh.arenaBytes + (1 << 16))
        #expect(try s.get("c", "k2999") == Self.record(6))
        #expect(try s.scan("c", prefix: "k299", limit: 2).map(\.key) == ["k299", "k2990"])
    }
}
