#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private copy of a store file, taken without any lock and checked to be consistent: how
/// a second process reads a store that another process has open (the `optimist` tool, and a
/// store opened read-only: ``SQLiteStoreFile/openReadOnly(path:cacheBytes:)``).
///
/// A store that a process has open is held with an exclusive SQLite lock (the library opens
/// it through SQLite's `unix-excl` VFS): no other process's SQLite connection may read it,
/// and taking a lock of our own could stall that process. So the file is never handed to
/// SQLite: it and its write-ahead log (`-wal`) are copied with plain reads into a directory of
/// the reader's own, and SQLite then opens the copy.
///
/// Why the copy is consistent: a writer in WAL mode only appends to the log, and writes into
/// the main file only pages the log already holds (a checkpoint); the log is rewritten from
/// its start (with a new header: new salts, a new checkpoint sequence number) only after a
/// checkpoint. The main file is copied first and the log second, so every page of the main
/// file copy that a checkpoint changed is also in the log copy, newer or the same, and the
/// log's own frames are checksummed (SQLite stops at a torn last frame). If the log's header,
/// the main file's header or a rollback journal (`-journal`: a store being created or
/// migrated) changed while copying, the copy is thrown away and taken again.
package enum StoreFileCopy {
    /// Why a copy could not be taken.
    package enum Failure: Error {
        /// The file is no store (not a regular file, empty, not SQLite, a `-wal` file).
        case notAStore(String)
        /// Missing, not readable, the copy could not be written, or it would not hold still.
        case unreadable(String)
    }

    /// What was copied: the sizes of the original main file and log, and whether a rollback
    /// journal came along (SQLite must then undo it in the copy: a read-write open).
    package struct Copied {
        package var fileBytes: Int64
        package var walBytes: Int64
        package var hasJournal: Bool
    }

    /// The names a copy into `directory` uses: the main file (`store.db`), then the files
    /// SQLite keeps beside it.
    package static func files(in directory: String) -> [String] {
        ["/store.db", "/store.db-wal", "/store.db-journal", "/store.db-shm"].map { directory + $0 }
    }

    /// Copies `path` (and its `-wal` and `-journal`) to `directory/store.db` (and beside it).
    /// Tries again while the store changes under the copy, up to `attempts` times.
    package static func take(_ path: String, into directory: String, attempts: Int = 50) throws(Failure) -> Copied {
        try precheck(path)
        let copy = directory + "/store.db"
        for attempt in 0..<attempts {
            if attempt > 0 { usleep(UInt32(min(attempt, 20)) * 5_000) }
            let before = Fingerprint(path)
            let db = try copyFile(path, to: copy)
            let wal = try copyFile(path + "-wal", to: copy + "-wal")
            let journal = try copyFile(path + "-journal", to: copy + "-journal")
            unlink(copy + "-shm")
            let after = Fingerprint(path)
            // The copies must begin as the originals did both before and after.
            guard before == after, db?.head == before.main,
                  (wal?.head ?? []).prefix(32).elementsEqual(before.wal),
                  journal?.bytes ?? 0 == before.journal else { continue }
            guard let db else { throw .unreadable("it disappeared while being read") }
            return Copied(fileBytes: db.bytes, walBytes: wal?.bytes ?? 0, hasJournal: (journal?.bytes ?? 0) > 0)
        }
        throw .unreadable("it kept changing while being copied (\(attempts) tries); try again")
    }

    /// A new private directory (0700) under `$TMPDIR` (or /tmp) named `prefix-XXXXXX`.
    package static func makeDirectory(prefix: String) throws(Failure) -> String {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty { base = "/tmp" }
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw .unreadable("cannot make a scratch directory in \(base): \(String(cString: strerror(errno)))") }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a copy's files and its directory.
    package static func remove(directory: String) {
        for f in files(in: directory) { unlink(f) }
        rmdir(directory)
    }

    /// Refuses what cannot be a store before copying anything, with the reason.
    private static func precheck(_ path: String) throws(Failure) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .unreadable(String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notAStore("it is not a regular file") }
        guard st.st_size > 0 else { throw .notAStore("the file is empty (no store was ever written to it)") }
        let head = readHead(path, 100)
        guard let head else { throw .unreadable(String(cString: strerror(errno))) }
        let magic = Array("SQLite format 3\0".utf8)
        if head.count >= 16 && Array(head[0..<16]) == magic { return }
        if head.count >= 4 && head[0] == 0x37 && head[1] == 0x7F && head[2] == 0x06 && (head[3] & 0xFE) == 0x82 {
            throw .notAStore("it is a SQLite write-ahead log; pass the store file itself (the name without -wal)")
        }
        throw .notAStore("it is not a SQLite database")
    }

    /// The first bytes of the files whose change means "copy again".
    private struct Fingerprint: Equatable {
        var main: [UInt8]
        var wal: [UInt8]
        var journal: Int64

        init(_ path: String) {
            main = readHead(path, 100) ?? []
            wal = readHead(path + "-wal", 32) ?? []
            var st = stat()
            journal = stat(path + "-journal", &st) == 0 ? Int64(st.st_size) : 0
        }
    }
}

/// Up to `count` bytes from the start of `path`; nil when it cannot be opened (absent).
private func readHead(_ path: String, _ count: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: count)
    var got = 0
    while got < count {
        let n = buf.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(got)) }
        if n <= 0 { break }
        got += n
    }
    return Array(buf[0..<got])
}

/// Copies `from` to `to` (created 0600) with plain reads; nil (and no `to`) when `from` does
/// not exist. Returns the size copied and the first 100 bytes.
private func copyFile(_ from: String, to: String) throws(StoreFileCopy.Failure) -> (bytes: Int64, head: [UInt8])? {
    unlink(to)
    let src = open(from, O_RDONLY | O_CLOEXEC)
    if src < 0 {
        if errno == ENOENT { return nil }
        throw .unreadable("\(from): \(String(cString: strerror(errno)))")
    }
    defer { close(src) }
    let dst = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard dst >= 0 else { throw .unreadable("cannot write the scratch copy \(to): \(String(cString: strerror(errno)))") }
    defer { close(dst) }
    let size = 1 << 20
    let buf = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    defer { buf.deallocate() }
    var total: Int64 = 0
    var head = [UInt8]()
    while true {
        let n = read(src, buf, size)
        if n < 0 {
            if errno == EINTR { continue }
            throw .unreadable("\(from): \(String(cString: strerror(errno)))")
        }
        if n == 0 { break }
        if head.count < 100 {
            head += UnsafeRawBufferPointer(start: buf, count: min(n, 100 - head.count))
        }
        var done = 0
        while done < n {
            let w = write(dst, buf + done, n - done)
            if w < 0 {
                if errno == EINTR { continue }
                throw .unreadable("cannot write the scratch copy (\(String(cString: strerror(errno)))): set TMPDIR to a directory with room for a copy of the store")
            }
            done += w
        }
        total += Int64(n)
    }
    return (total, head)
}
