import CSQLite
import OptimistCore
import OptimistModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening and checking store files.
///
/// A store file is one SQLite database in WAL mode (see ``BatchWriter`` for the durability
/// choice), held exclusively while open: any other opener, in this process or another, gets
/// `BUSY` at once. It is opened through SQLite's `unix-excl` VFS, which takes an exclusive
/// lock on the file at the first read and keeps it until the file's last connection closes,
/// and keeps the WAL index in this process's memory (no `-shm` file is made). The lock is the
/// operating system's own (fcntl), so it goes away with a killed process and no stale lock
/// file is ever left behind. That VFS lets further connections of the same process in, and
/// the store uses two: the background writer's, and one for its reads, so a read that misses
/// the record cache never waits for a commit in progress. A second opener in this process is
/// turned away by ``OpenFiles``.
///
/// A process whose default SQLite VFS is not SQLite's `unix` (an app's own, a test's
/// fault-injecting one) has its store files opened through that default instead, which must
/// support WAL mode; keeping other processes out is then up to it.
public enum SQLiteStoreFile {
    /// Opens (creating if absent) the store file at `path`: loads what the store keeps in
    /// memory (O(pending mutations)) and returns the journal its changes go to and the storage
    /// its confirmed records are read from (with a cache of `cacheBytes`).
    ///
    /// - Throws: `.io` when the file cannot be created, opened or written (missing directory,
    ///   read-only file); `.corrupt` when it is not an Optimist store or is damaged; `.busy`
    ///   when another connection holds it.
    package static func open(path: String, cacheBytes: Int = defaultCacheBytes)
        throws(OptimistError) -> (snapshot: StoreSnapshot, journal: SQLiteJournal, storage: any ConfirmedStorage) {
        guard !path.isEmpty else { throw .misuse("an empty store path") }
        try createPrivately(path)
        let claim = try OpenFiles.claim(path)
        let vfs = storeVFS()
        var opened = [Connection]()
        do throws(OptimistError) {
            let c = try Connection(path: path, vfs: vfs)
            opened.append(c)
            // Refuse before touching anything: a read-only file cannot keep the promise.
            if c.isReadOnly { throw OptimistError.io("\(path) is read-only") }
            _ = try Schema.prepare(c)
            guard try c.scalarText("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                throw OptimistError.io("\(path): cannot switch to WAL mode")
            }
            // A big batch grows the WAL; after its checkpoint the file is cut back to 8 MB. The
            // loader and the writer read through the memory map too (see the reader below).
            try c.exec("""
                PRAGMA cache_size = -8000; PRAGMA temp_store = MEMORY; PRAGMA journal_size_limit = 8388608;
                PRAGMA mmap_size = 1073741824
                """)
            try markOpen(c)
            // The live mutations are read as the store folds them, through a connection of
            // their own (the loader's from here on: it closes it).
            let mutations = MutationLoader(connection: try Connection(path: path, vfs: vfs))
            let snapshot = try SnapshotLoader.load(c, mutations: mutations)
            // Records are read on demand through their own connection: the file is
            // memory-mapped (up to 1 GiB), so a read that misses the store's cache costs no
            // system call, and the pages it touches are the kernel's clean file pages
            // (reclaimable), not the process's own memory; its page cache is small for that.
            let reader = try Connection(path: path, vfs: vfs)
            opened.append(reader)
            try reader.exec("PRAGMA cache_size = -2000; PRAGMA temp_store = MEMORY; PRAGMA mmap_size = 1073741824")
            let journal = try SQLiteJournal(writer: try BatchWriter(c))
            do {
                let storage = try SQLiteStorage(connection: reader, writer: journal.state, cacheBytes: cacheBytes,
                                                writerConnection: c)
                journal.state.releaseOnClose(claim)
                return (snapshot, journal, storage)
            } catch {
                try? journal.close()
                throw error
            }
        } catch {
            // The reader first: the writer's connection, closed last, checkpoints the log.
            for c in opened.reversed() { c.close() }
            OpenFiles.release(claim)
            throw named(error, path)
        }
    }

    /// The VFS store files are opened through: `unix-excl` when the process's default is
    /// SQLite's `unix` (see above); otherwise nil, the default.
    static func storeVFS() -> String? {
        guard let vfs = sqlite3_vfs_find(nil), String(cString: vfs.pointee.zName) == "unix",
              sqlite3_vfs_find("unix-excl") != nil else { return nil }
        return "unix-excl"
    }

    /// What opening `path` failed with, said so that the file is named. SQLite's own text
    /// ("BEGIN IMMEDIATE: database is locked") does not say which store another process holds,
    /// and an app with several stores must tell its user (or log) which. SQLite's generic
    /// error (`.internal` here) while loading means the file's schema is not what this library
    /// wrote ("no such column", a damaged `sqlite_master`, found by Tests/Fuzz/fuzz_store_file):
    /// the file is damaged, and a caller is promised OK, IO, CORRUPT or BUSY for a file.
    static func named(_ error: OptimistError, _ path: String) -> OptimistError {
        switch error {
        case .busy(let message) where !message.contains(path):
            return .busy("\(path) is open in another process or connection (\(message))")
        case .internal(let message):
            return .corrupt("\(path) is damaged or not an Optimist store: \(message)")
        default:
            return error
        }
    }

    /// Ids a store skips after it was not closed (killed, crashed, power lost).
    ///
    /// The store hands out a mutation id before the background writer has made it durable, so
    /// an id may reach a server (through the outbox) and then be lost in a crash. Reusing it
    /// would make the server drop a different mutation as a duplicate of it. After an unclean
    /// end, the next id therefore jumps past every id the lost process can plausibly have
    /// handed out without writing (more than a million mutations queued but unwritten).
    public static let idGapAfterCrash: UInt64 = 1 << 20

    /// Marks the file open (fsynced), first skipping ids when the last session did not close.
    static func markOpen(_ c: Connection) throws(OptimistError) {
        try c.exec("PRAGMA synchronous = FULL; BEGIN IMMEDIATE")
        do throws(OptimistError) {
            try c.exec("""
                UPDATE meta SET next_mutation_id = next_mutation_id + \(idGapAfterCrash) WHERE one = 1 AND closed_cleanly = 0;
                UPDATE meta SET closed_cleanly = 0 WHERE one = 1;
                COMMIT
                """)
        } catch {
            try? c.exec("ROLLBACK")
            throw error
        }
    }

    /// Runs SQLite's full integrity check on a closed store file: "ok", or what is wrong.
    ///
    /// - Throws: `.busy` when the store is open; `.io` / `.corrupt` when the file cannot be read.
    public static func checkIntegrity(path: String) throws(OptimistError) -> String {
        // A store open in this process would let this connection in (see above).
        if OpenFiles.isOpen(path) { throw .busy("\(path) is open in this process") }
        let c = try Connection(path: path, vfs: storeVFS())
        defer { c.close() }
        let s = try c.prepare("PRAGMA integrity_check")
        var lines = [String]()
        while try s.step() { lines.append(s.text(0) ?? "") }
        return lines.joined(separator: "\n")
    }

    /// Creates the file with mode 0600 when it does not exist (whatever the umask), so the
    /// store and the `-wal` file SQLite makes beside it (which copies the main file's mode)
    /// are readable by their owner only. An existing file keeps its mode. The directory is
    /// synced, so the new file's name survives a power loss (SQLite syncs the WAL's itself).
    static func createPrivately(_ path: String) throws(OptimistError) {
        let fd = createExclusively(path, mode: 0o600)
        if fd >= 0 {
            fchmod(fd, 0o600)
            closeFile(fd)
            syncDirectory(of: path)
            return
        }
        let err = errno
        if err == EEXIST { return }
        throw .io("cannot create \(path): \(String(cString: strerror(err)))")
    }
}

/// Best effort: a file system that cannot sync directories still has the file.
private func syncDirectory(of path: String) {
    var dir = path
    while let last = dir.last, last != "/" { dir.removeLast() }
    if dir.isEmpty { dir = "." }
    let fd = openDirectory(dir)
    guard fd >= 0 else { return }
    fsync(fd)
    closeFile(fd)
}

// At file scope, so the names mean the C functions and not ``SQLiteStoreFile/open(path:)``.
private func createExclusively(_ path: String, mode: mode_t) -> Int32 { open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
private func openDirectory(_ path: String) -> Int32 { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
private func closeFile(_ fd: Int32) { _ = close(fd) }
