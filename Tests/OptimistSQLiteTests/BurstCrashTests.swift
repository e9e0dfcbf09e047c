#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel

/// Kill -9 while big batches are being written: each batch is one transaction, so a reopened
/// store holds the flushed mutations and then a gapless run of later ones, never part of one.
@Suite struct BurstCrashTests {
    @Test(arguments: [0, 5, 20, 60, 150] as [Int64])
    func killedDuringBigBatches(delayMs: Int64) throws {
        let n = 4000
        let dir = TempDir()
        let path = dir.file("burst.db")
        let p = try ChildProcess(crashChild: ["burst", path, "\(n)"])
        #expect(p.readLine(timeoutMs: 60_000) == "flushed \(n)")
        let deadline = monotonicMs() + delayMs
        while case let left = deadline - monotonicMs(), left > 0, p.readLine(timeoutMs: left) != nil {}
        p.kill(SIGKILL)
        _ = p.drain()
        #expect(p.wait() == 128 + SIGKILL)

        #expect(try SQLiteStoreFile.checkIntegrity(path: path) == "ok")
        try withStore(path) { s throws in
            let count = try s.pendingCount()
            #expect(count >= n && count <= 2 * n)
            // Ids 1...count are all there (pending), nothing after: a prefix, no holes.
            for id in 1...MutationID(count) { #expect(try s.status(id) == .pending) }
            #expect(throws: OptimistError.self) { try s.status(MutationID(count) + 1) }
            // And the records agree with exactly those mutations.
            let later = count - n
            #expect(try s.scan("burst", prefix: "a").count == n)
            #expect(try s.scan("burst", prefix: "b").count == later)
            #expect(try s.get("burst", "count") == (later == 0 ? nil : ["n": .number(Double(later))]))
            print("burst: killed \(delayMs) ms after the flush, \(later) of \(n) later mutations were written")
        }
    }
}
