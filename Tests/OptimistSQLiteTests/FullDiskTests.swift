#if canImport(Glibc)
import Glibc
#endif
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel
import OptimistC

/// Background writes that the disk refuses: the error is reported once by the next call,
/// nothing flushed is lost, memory stays consistent, and a later flush retries.
@Suite struct FullDiskTests {
    static let big: Record = ["pad": .string(String(repeating: "x", count: 3000))]

    /// Mutates big records until a call reports the writer's failure (the failing call
    /// changes nothing); returns how many were accepted and whether the failure was reported.
    func mutateBigUntilIO(_ s: Store) -> (accepted: Int, reported: Bool) {
        var big = 0
        while big < 400 {
            do {
                try s.mutate([.put(collection: "big", key: Key("b\(big)"), value: Self.big)])
                big += 1
            } catch {
                #expect(error.code == 7, "\(error)")
                return (big, true)
            }
            usleep(2_000)
        }
        return (big, false)
    }

    @Test func pageCapFailsWritesUntilLifted() throws {
        let dir = TempDir()
        let path = dir.file("capped.db")
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path)
        let s = try Store(restoring: snapshot, storage: storage, sink: journal)
        for i in 0..<20 { try s.serverApply([.put(collection: "early", key: Key("e\(i)"), value: ["i": .number(Double(i))])]) }
        let kept = try s.mutate([.patch(collection: "early", key: "e1", value: ["p": true])])
        try s.flush()

        journal.limitPages(1)   // SQLite raises a cap below the file's size to its size: no room to grow
        let (big, reported) = mutateBigUntilIO(s)
        #expect(reported)
        // Reported once: the next call goes through (and is kept in memory).
        let after = try s.mutate([.put(collection: "late", key: "after", value: [:])])
        // A flush retries, and fails again while the cap holds.
        #expect(throws: OptimistError.self) { try s.flush() }
        // Memory stayed consistent: everything accepted is visible, the failing call changed nothing.
        #expect(try s.scan("big").count == big)
        #expect(try s.pendingCount() == 1 + big + 1)

        journal.limitPages(nil)
        try s.flush()                       // the retry goes through
        try s.close()

        let r = try Store.open(path: path)
        defer { try? r.close() }
        #expect(try r.scan("early").count == 20)
        #expect(try r.get("early", "e1") == ["i": 1, "p": true])
        #expect(try r.status(kept) == .pending)
        #expect(try r.scan("big").count == big)
        #expect(try r.status(after) == .pending)
        #expect(try r.mutate([.delete(collection: "x", key: "y")]) == after + 1)
    }

    @Test func closingWhileFullLosesOnlyWhatWasNeverFlushed() throws {
        let dir = TempDir()
        let path = dir.file("closefull.db")
        let (snapshot, journal, storage) = try SQLiteStoreFile.open(path: path)
        let s = try Store(restoring: snapshot, storage: storage, sink: journal)
        let flushed = try s.mutate([.put(collection: "c", key: "flushed", value: ["v": 1])])
        try s.flush()
        journal.limitPages(1)
        let (accepted, reported) = mutateBigUntilIO(s)
        #expect(reported)
        #expect(throws: OptimistError.self) { try s.close() }
        #expect(s.isClosed)

        #expect(try SQLiteStoreFile.checkIntegrity(path: path) == "ok")
        let r = try Store.open(path: path)
        defer { try? r.close() }
        #expect(try r.get("c", "flushed") == ["v": 1])
        #expect(try r.status(flushed) == .pending)
        // Batches that fit in the file's free space may have gone in before it was full: what
        // is there is a prefix of the big mutations, never more than that.
        let big = try r.scan("big").map(\.key)
        #expect(big.count < accepted)
        #expect(Set(big) == Set((0..<big.count).map { Key("b\($0)") }))
        #expect(try r.pendingCount() == 1 + big.count)
    }

    /// A real full disk: a tiny tmpfs (needs root; skipped otherwise).
    @Test(.enabled(if: geteuid() == 0)) func fullFileSystem() throws {
        // Room for the file and its WAL twice over once the filler is gone: a checkpoint copies
        // the WAL into the file while both exist.
        guard let disk = TinyDisk(kilobytes: 2048) else {
            print("fullFileSystem: skipped, cannot mount a tmpfs here")
            return
        }
        let path = disk.dir.file("full.db")
        let s = try Store.open(path: path)
        let first = try s.mutate([.put(collection: "c", key: "first", value: ["v": 1])])
        try s.flush()
        // Fill the file system.
        let filler = disk.dir.file("filler")
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 7, count: 4096)
        while write(fd, block, block.count) == block.count {}
        close(fd)

        // Big records until the writer fails and a call reports it (once).
        let (big, reported) = mutateBigUntilIO(s)
        #expect(reported)
        print("fullFileSystem: the writer failed after \(big) big records were accepted")
        let late = try s.mutate([.put(collection: "late", key: "l", value: [:])])
        #expect(throws: OptimistError.self) { try s.flush() }
        #expect(try s.scan("big").count == big)

        unlink(filler)
        try s.flush()
        try s.close()
        try withStore(path) { r throws in
            #expect(try r.get("c", "first") == ["v": 1] && r.status(first) == .pending)
            #expect(try r.scan("big").count == big)
            #expect(try r.status(late) == .pending)
        }
    }
}
