#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import OptimistCore
import OptimistModel
import OptimistOpen
@testable import OptimistCore
@testable import OptimistModel
@testable import OptimistSQLite

/// The journal queues a change's entries in the order the change made them, whether it copies
/// them (`append(_:)`) or moves them out of the store's buffer (`append(taking:)`).
@Suite struct SQLiteJournalTests {
    /// Entries whose order decides what the file ends up holding: a key put twice, a key put
    /// then deleted, a mutation then its end.
    func entries(_ c: Key) -> [JournalEntry] {
        [.confirmed(collection: c, key: "twice", value: ["n": 1]),
         .confirmed(collection: c, key: "twice", value: ["n": 2]),
         .confirmed(collection: c, key: "gone", value: ["n": 3]),
         .confirmed(collection: c, key: "gone", value: nil),
         .mutation(MutationRecord(id: 1, ops: [.put(collection: c, key: "m", value: [:])])),
         .ended(id: 1, status: .committed),
         .mutation(MutationRecord(id: 2, ops: [.put(collection: c, key: "m", value: ["live": true])]))]
    }

    @Test(arguments: [false, true])
    func entriesAreWrittenInTheirOrder(taking: Bool) throws {
        let dir = TempDir()
        let path = dir.file("order.db")
        let (_, journal, _) = try SQLiteStoreFile.open(path: path)
        var batch = entries("c")
        let capacity = batch.capacity
        if taking {
            journal.append(taking: &batch, number: 1)
            #expect(batch.isEmpty)
            #expect(batch.capacity == capacity)   // the buffer stays for the next change
        } else {
            journal.append(batch, number: 1)
            #expect(batch.count == 7)             // copied, not taken
        }
        try journal.close()
        try withStore(path) { (s: Store) throws in
            #expect(try s.confirmed("c", "twice") == ["n": 2])
            #expect(try s.confirmed("c", "gone") == nil)
            #expect(try s.status(1) == .committed)
            #expect(try s.status(2) == .pending)
            #expect(try s.get("c", "m") == ["live": true])
        }
    }

    /// A flush frees the entries the writer wrote: a bulk load's, one per record, would
    /// otherwise be freed a few per later call, and a thousand taps after it would each pay
    /// for freeing cold records.
    @Test func aFlushLetsGoOfWhatTheWriterWrote() throws {
        let dir = TempDir()
        let path = dir.file("spent.db")
        let (_, journal, _) = try SQLiteStoreFile.open(path: path)
        journal.append((0..<1000).map { .confirmed(collection: "c", key: Key("k\($0)"), value: ["n": .number(Double($0))]) }, number: 1)
        try journal.flush()
        #expect(journal.state.spentCount == 0)
        // Also when the writer wrote the entries before the flush began (the flush only syncs).
        journal.append([.confirmed(collection: "c", key: "last", value: [:])], number: 2)
        while journal.state.committedCount.load(ordering: .acquiring) < 2 { usleep(1000) }
        try journal.flush()
        #expect(journal.state.spentCount == 0)
        try journal.close()
        try withStore(path) { (s: Store) throws in
            #expect(try s.confirmed("c", "k999") == ["n": 999])
            #expect(try s.confirmed("c", "last") == [:])
        }
    }
}
