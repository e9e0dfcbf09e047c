import Testing
@testable import OptimistCore
import OptimistOpen
@testable import OptimistSQLite
@testable import OptimistModel
import OptimistTestSupport

/// Ordered secondary indexes in a store file: built from the records there, kept by the
/// file's triggers through every kind of write, there after a reopen without being built
/// again, and read by a query's first evaluation with the same rows as a read of the
/// collection.
@Suite struct IndexTests {
    static func log(_ i: Int) -> Op {
        .put(collection: "logs", key: Key("d\(1000 + i)"),
             value: ["habit": .string(["run", "read", "nap", "walk"][i % 4]), "minutes": .number(Double(i % 50))])
    }

    static let runs = #"{"collection": "logs", "where": {"field": "habit", "eq": "run"}, "order": [{"field": "minutes", "desc": true}], "limit": 20}"#
    /// The same rows, with a predicate no index fits (`not` of `ne`, which a missing field passes).
    static let runsUnindexed = #"{"collection": "logs", "where": {"not": {"field": "habit", "ne": "run"}}, "order": [{"field": "minutes", "desc": true}], "limit": 20}"#

    /// Index entries the file holds for index `id`, read after the store closed.
    static func entries(_ path: String) throws -> Int64 {
        let c = try Connection(path: path, readOnly: true)
        defer { c.close() }
        return try c.scalarInt("SELECT count(*) FROM index_entries")
    }

    @Test func anIndexIsKeptInTheFileAndReadAfterAReopen() throws {
        let dir = TempDir()
        let path = dir.file("logs.optimist")
        var s = try Store.open(path: path)
        try s.serverApply((0..<2000).map(Self.log))
        try s.defineIndex(collection: "logs", field: FieldPath("habit"))
        #expect(try s.query(json: Self.runs).rows() == s.query(json: Self.runsUnindexed).rows())
        try s.flush()
        try s.close()
        #expect(try Self.entries(path) == 2000)

        s = try Store.open(path: path, cacheBytes: 1)
        #expect(try s.indexedFields(collection: "logs") == [FieldPath("habit")])
        try s.defineIndex(collection: "logs", field: FieldPath("habit"))  // there: nothing built
        // Writes after the reopen reach the entries: puts, deletes, a staged batch, pending changes.
        try s.serverApply([.delete(collection: "logs", key: "d1000"), Self.log(4001)])
        s.stagingThreshold = 1
        try s.serverApply((2000..<2100).map(Self.log))
        let id = try s.mutate([.put(collection: "logs", key: "d1004", value: ["habit": "swim", "minutes": 49])])
        let rows = try s.query(json: Self.runs).rows()
        let plain = try s.query(json: Self.runsUnindexed).rows()
        #expect(rows == plain, "\(rows.map(\.json)) vs \(plain.map(\.json))")
        #expect(rows.count == 20)
        #expect(!rows.contains { if case .record(let k, _, _) = $0 { k == "d1000" || k == "d1004" } else { false } })
        try s.commit(id)
        try s.flush()
        try s.close()
        // 2000 + 1 (4001) + 100 (staged) - 1 (deleted); d1004 moved to "swim", still one entry.
        #expect(try Self.entries(path) == 2100)
    }

    /// A definition writes through the writer's own connection: one through a connection of
    /// its own left the file locked for the writer's next batch (`BEGIN IMMEDIATE: database
    /// is locked`), and the tap right after the definition failed with `IO`.
    @Test func aTapRightAfterADefinitionIsWritten() throws {
        let dir = TempDir()
        let path = dir.file("tap.optimist")
        let s = try Store.open(path: path)
        try s.serverApply([Self.log(1)])
        try s.defineIndex(collection: "logs", field: FieldPath("habit"))
        try s.defineIndex(collection: "logs", field: FieldPath("minutes"))
        let id = try s.mutate([Self.log(2), .delete(collection: "logs", key: "d1001")])
        try s.commit(id)
        try s.flush()
        try s.close()
        #expect(try Self.entries(path) == 2)  // d1002 in both indexes
    }

    @Test func badFieldsAreRefused() throws {
        let s = Store()
        #expect(throws: OptimistError.self) { try s.defineIndex(collection: "logs", field: .key) }
        #expect(throws: OptimistError.self) { try s.defineIndex(collection: "logs", field: FieldPath(names: [])) }
        #expect(throws: OptimistError.self) { try s.defineIndex(collection: "logs", field: FieldPath("a..b")) }
        try s.close()
        #expect(throws: OptimistError.self) { try s.defineIndex(collection: "logs", field: FieldPath("habit")) }
    }
}
