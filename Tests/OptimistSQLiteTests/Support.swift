#if canImport(Glibc)
import Glibc
#endif
import OptimistCore
import OptimistModel
import OptimistOpen
import CSQLite

/// A fresh directory under /tmp, removed with its (flat) contents when released.
final class TempDir {
    let path: String

    init() {
        var template = Array("/tmp/optimist-sqlite-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit {
        if let d = opendir(path) {
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(file(name)) }
            }
            closedir(d)
        }
        rmdir(path)
    }
}

/// Runs `body` on a store opened at `path`, then closes it.
func withStore<R>(_ path: String, _ body: (Store) throws -> R) throws -> R {
    let s = try Store.open(path: path)
    defer { try? s.close() }
    return try body(s)
}

/// The file's permission bits, or nil when it does not exist.
func fileMode(_ path: String) -> mode_t? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o777
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func monotonicMs() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
}

/// Runs a command to completion (for `mount`); returns its exit status.
@discardableResult
func runCommand(_ argv: [String]) -> Int32 {
    guard let p = try? ChildProcess(executable: argv[0], argv, quiet: true) else { return -1 }
    _ = p.drain()
    return p.wait()
}

/// A tmpfs of `kilobytes` mounted on a fresh directory, when this process may mount (root);
/// unmounted on release.
final class TinyDisk {
    let dir = TempDir()
    var path: String { dir.path }

    init?(kilobytes: Int) {
        guard geteuid() == 0, runCommand(["/bin/mount", "-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", dir.path]) == 0 else {
            return nil
        }
    }

    func remount(readOnly: Bool) -> Bool {
        runCommand(["/bin/mount", "-o", "remount,\(readOnly ? "ro" : "rw")", dir.path]) == 0
    }

    deinit { runCommand(["/bin/umount", "-l", dir.path]) }
}

/// The first integer column of `sql`'s first row on the closed store file at `path` (-1: no row).
func pragma(_ path: String, _ sql: String) -> Int64 {
    var db: OpaquePointer?, stmt: OpaquePointer?
    precondition(sqlite3_open(path, &db) == SQLITE_OK)
    defer { sqlite3_close(db) }
    precondition(sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK)
    defer { sqlite3_finalize(stmt) }
    return sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1
}
