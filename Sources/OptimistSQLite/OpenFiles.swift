import OptimistCore
import OptimistModel
import OptimistThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store files this process has open, by device and inode.
///
/// A store file is opened through SQLite's `unix-excl` VFS (see ``SQLiteStoreFile``), whose lock
/// keeps every other process out but lets further connections of this process in: that is
/// what lets the store read through a connection of its own beside the writer's. A second
/// `open` of the same file in this process must still get `BUSY`, and that is this registry's
/// job. Device and inode, not the path: a file reached by two paths (a link, `./` or not) is
/// one store.
enum OpenFiles {
    struct ID: Hashable { let device: UInt64, inode: UInt64 }

    // A pthread mutex (``Monitor``), which ThreadSanitizer sees, rather than the standard
    // library's `Mutex` (a futex on Linux, which it does not, and reports as a race).
    private static let lock = Monitor()
    nonisolated(unsafe) private static var open = Set<ID>()

    /// The file's identity (it exists: the opener created it first).
    static func id(of path: String) throws(OptimistError) -> ID {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw .io("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return ID(device: UInt64(truncatingIfNeeded: st.st_dev), inode: UInt64(truncatingIfNeeded: st.st_ino))
    }

    /// Marks the file open in this process; `BUSY` when it is open here already.
    static func claim(_ path: String) throws(OptimistError) -> ID {
        let id = try id(of: path)
        let claimed = lock.locked { open.insert(id).inserted }
        guard claimed else { throw .busy("\(path) is open in this process already") }
        return id
    }

    static func release(_ id: ID) {
        _ = lock.locked { open.remove(id) }
    }

    static func isOpen(_ path: String) -> Bool {
        guard let id = try? id(of: path) else { return false }
        return lock.locked { open.contains(id) }
    }
}
