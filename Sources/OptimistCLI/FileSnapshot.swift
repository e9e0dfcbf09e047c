#if canImport(Glibc)
import Glibc
#endif
import OptimistSQLite

/// The tool's private copy of a store file (see `StoreFileCopy` in OptimistSQLite for how it
/// is taken without disturbing a process that has the store open), removed when the tool ends.
final class FileSnapshot {
    let directory: String
    /// The copy of the main file; SQLite finds the log copy beside it.
    let database: String
    /// The sizes of the original main file and log when copied.
    let fileBytes: Int64
    let walBytes: Int64
    /// A rollback journal was copied: SQLite must undo it in the copy (read-write open).
    let hasJournal: Bool

    private init(directory: String, _ copied: StoreFileCopy.Copied) {
        self.directory = directory
        database = directory + "/store.db"
        fileBytes = copied.fileBytes
        walBytes = copied.walBytes
        hasJournal = copied.hasJournal
    }

    deinit { Cleanup.remove() }

    /// Copies `path` (and its `-wal` and `-journal`) into a new directory under `$TMPDIR`
    /// (or /tmp).
    static func take(_ path: String) throws(CLIError) -> FileSnapshot {
        do throws(StoreFileCopy.Failure) {
            let dir = try StoreFileCopy.makeDirectory(prefix: "optimist-cli")
            Cleanup.register(dir)
            return FileSnapshot(directory: dir, try StoreFileCopy.take(path, into: dir))
        } catch {
            switch error {
            case .notAStore(let m): throw .notAStore(m)
            case .unreadable(let m): throw .unreadable(m)
            }
        }
    }
}
