#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import Testing
import OptimistCore
import OptimistOpen
import OptimistSQLite
import OptimistModel
import OptimistC

/// Makes a SQLite database that is not an Optimist store.
func makeSQLite(_ path: String, _ sql: String) {
    var db: OpaquePointer?
    precondition(sqlite3_open(path, &db) == SQLITE_OK)
    precondition(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    sqlite3_close(db)
}

/// The C result code a call ends with (0: it succeeded; -1: not an OptimistError).
func code(_ body: () throws -> Void) -> Int32 {
    do { try body(); return 0 } catch let e as OptimistError { return e.code } catch { return -1 }
}

func readAll(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    var out = [UInt8](), chunk = [UInt8](repeating: 0, count: 65536)
    while case let n = read(fd, &chunk, chunk.count), n > 0 { out += chunk[0..<n] }
    return out
}

/// Opening what cannot be a store, or cannot be had, fails with the right code.
@Suite struct OpenErrorTests {
    static let io: Int32 = 7, corrupt: Int32 = 8, busy: Int32 = 9

    @Test func uncreatablePathsAreIO() {
        let dir = TempDir()
        #expect(code { _ = try Store.open(path: "/nonexistent-optimist-dir/a/b.db") } == Self.io)
        #expect(code { _ = try Store.open(path: dir.path) } == Self.io)          // a directory
        #expect(code { _ = try Store.open(path: "") } == 2)                      // misuse
    }

    @Test(arguments: [Array("hello".utf8), [UInt8](repeating: 0x5A, count: 8192),
                      Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xFF, count: 4000)])
    func garbageFilesAreCorruptAndUntouched(bytes: [UInt8]) {
        let dir = TempDir()
        let path = dir.file("garbage.db")
        writeFile(path, bytes)
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
        #expect(readAll(path) == bytes)
    }

    @Test func foreignSQLiteDatabaseIsCorruptAndUntouched() {
        let dir = TempDir()
        let path = dir.file("foreign.db")
        makeSQLite(path, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES ('ann');")
        let before = readAll(path)
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
        #expect(readAll(path) == before)
        // Another application's id, even with no tables, is not ours either.
        let other = dir.file("other.db")
        makeSQLite(other, "PRAGMA application_id = 1234")
        #expect(code { _ = try Store.open(path: other) } == Self.corrupt)
    }

    @Test func aNewerLayoutIsRefused() throws {
        let dir = TempDir()
        let path = dir.file("newer.db")
        try withStore(path) { _ in }
        makeSQLite(path, "PRAGMA user_version = 99")
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
    }

    @Test func damagedContentsAreCorrupt() throws {
        let dir = TempDir()
        for (i, damage) in ["UPDATE mutations SET ops = 'not json'", "UPDATE mutations SET status = 9",
                            "UPDATE records SET value = '[1]'", "DELETE FROM meta",
                            "INSERT INTO ended_chunks VALUES (99, x'01')"].enumerated() {
            let path = dir.file("damaged-\(i).db")
            try withStore(path) { s throws in
                try s.serverApply([.put(collection: "c", key: "k", value: ["a": 1])])
                try s.mutate([.patch(collection: "c", key: "k", value: ["b": 2])])
            }
            makeSQLite(path, damage)
            #expect(code { _ = try Store.open(path: path) } == Self.corrupt, "\(damage)")
        }
    }

    /// A damaged mutation far into the file (its fourth chunk, read while the first ones are
    /// folded on another thread) still fails the whole open with CORRUPT, leaves the file as it
    /// was and free: once the row is mended, the store opens with every mutation.
    @Test func aDamagedMutationLateInTheFileIsCorrupt() throws {
        let dir = TempDir()
        let path = dir.file("late.db")
        try withStore(path) { s throws in
            for i in 0..<15_000 { try s.mutate([.put(collection: "c", key: Key("k\(i)"), value: ["i": .number(Double(i))])]) }
        }
        makeSQLite(path, "UPDATE mutations SET ops = 'not json' WHERE id = (SELECT id FROM mutations ORDER BY id LIMIT 1 OFFSET 14000)")
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)   // not BUSY: the failed open let go
        makeSQLite(path, "DELETE FROM mutations WHERE ops = 'not json'")
        try withStore(path) { s throws in
            #expect(try s.pendingCount() == 14_999)
            #expect(try s.get("c", "k14999") == ["i": 14_999])
            #expect(try s.get("c", "k14000") == nil)
        }
    }

    @Test func damagedPagesAreCorrupt() throws {
        let dir = TempDir()
        let path = dir.file("pages.db")
        try withStore(path) { s throws in
            for i in 0..<300 { try s.serverApply([.put(collection: "c", key: Key("k\(i)"), value: ["pad": .string(String(repeating: "x", count: 200))])]) }
        }
        var bytes = readAll(path)
        try #require(bytes.count > 8 * 4096)
        for i in 4096..<(bytes.count - 4096) { bytes[i] = UInt8(truncatingIfNeeded: i &* 31) }
        writeFile(path, bytes)
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
    }

    @Test func secondOpenInThisProcessIsBusy() throws {
        let dir = TempDir()
        let path = dir.file("held.db")
        let s = try Store.open(path: path)
        #expect(code { _ = try Store.open(path: path) } == Self.busy)
        // The message names the file: an app with several stores can tell which one is held.
        do { _ = try Store.open(path: path); Issue.record("opened twice") } catch {
            #expect("\(error)".contains(path), "\(error)")
        }
        try s.close()
        try withStore(path) { _ in }   // free again once closed
    }

    /// A file whose schema text is damaged (SQLite then fails with its generic error, "no such
    /// column") is CORRUPT, naming the file, not an internal error (found by fuzz_store_file).
    @Test func aDamagedSchemaIsCorrupt() throws {
        let dir = TempDir()
        let path = dir.file("schema.db")
        try withStore(path) { _ in }
        var bytes = readAll(path)
        let needle = Array("bits BLOB".utf8)
        guard let at = (0...(bytes.count - needle.count)).first(where: { Array(bytes[$0..<$0 + needle.count]) == needle }) else {
            Issue.record("no ended_chunks definition in the file")
            return
        }
        for i in at..<at + 4 { bytes[i] = UInt8(ascii: "x") }  // the column is now "xxxx"
        writeFile(path, bytes)
        #expect(code { _ = try Store.open(path: path) } == Self.corrupt)
        do { _ = try Store.open(path: path) } catch { #expect("\(error)".contains(path), "\(error)") }
    }

    @Test func openInAnotherProcessIsBusy() throws {
        let dir = TempDir()
        let path = dir.file("held2.db")
        // The child holds it: this process gets BUSY.
        let child = try ChildProcess(crashChild: ["hold", path])
        #expect(child.readLine(timeoutMs: 30_000) == "open")
        #expect(code { _ = try Store.open(path: path) } == Self.busy)
        // Killed, its lock goes with it.
        child.kill(SIGKILL)
        _ = child.wait()
        let s = try Store.open(path: path)
        // This process holds it: the child gets BUSY.
        let second = try ChildProcess(crashChild: ["hold", path])
        #expect(second.readLine(timeoutMs: 30_000) == "error \(Self.busy)")
        _ = second.wait()
        try s.close()
    }

    @Test func filesAreCreatedOwnerOnly() throws {
        let dir = TempDir()
        let path = dir.file("private.db")
        let old = umask(0o022)
        defer { umask(old) }
        let s = try Store.open(path: path)
        try s.mutate([.put(collection: "c", key: "k", value: ["secret": "yes"])])
        try s.flush()
        #expect(fileMode(path) == 0o600)
        #expect(fileMode(path + "-wal") == 0o600)
        #expect(!fileExists(path + "-shm"))   // the WAL index lives in memory (exclusive mode)
        try s.close()
        #expect(fileMode(path) == 0o600)
    }

    @Test func readOnlyFileIsIO() throws {
        if geteuid() == 0 {
            // Root ignores permission bits: use a file system mounted read-only instead.
            guard let disk = TinyDisk(kilobytes: 1024) else {
                print("readOnlyFileIsIO: skipped, root cannot mount a tmpfs here")
                return
            }
            let path = disk.dir.file("ro.db")
            try withStore(path) { s throws in _ = try s.mutate([.put(collection: "c", key: "k", value: [:])]) }
            try #require(disk.remount(readOnly: true))
            #expect(code { _ = try Store.open(path: path) } == Self.io)
            #expect(code { _ = try Store.open(path: disk.dir.file("new.db")) } == Self.io)
            try #require(disk.remount(readOnly: false))
            try withStore(path) { s throws in #expect(try s.pendingCount() == 1) }
        } else {
            let dir = TempDir()
            let path = dir.file("ro.db")
            try withStore(path) { _ in }
            chmod(path, 0o400)
            #expect(code { _ = try Store.open(path: path) } == Self.io)
        }
    }
}
