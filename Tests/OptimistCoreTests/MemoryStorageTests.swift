import Testing
@testable import OptimistCore
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
}
