#if canImport(Glibc)
import Glibc
#endif
import OptimistSQLite

/// Removes the scratch copy when the tool ends, also when a signal ends it (Ctrl-C, a closed
/// pipe as in `optimist dump FILE | head`, a kill): the copy holds the store's data.
///
/// The paths are kept as C strings made in advance, so the signal handler only calls
/// `unlink`, `rmdir` and `_exit`, which are safe there.
enum Cleanup {
    /// The scratch files, then the directory (last), or empty.
    nonisolated(unsafe) private static var paths: [UnsafeMutablePointer<CChar>] = []

    /// Arms the cleanup of `directory` (one at a time).
    static func register(_ directory: String) {
        remove()
        paths = StoreFileCopy.files(in: directory).map { strdup($0)! } + [strdup(directory)!]
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
            signal(sig) { sig in
                Cleanup.removeFiles()
                _exit(128 + sig)
            }
        }
    }

    /// Removes the scratch files and directory now, and disarms.
    static func remove() {
        removeFiles()
        for p in paths { free(p) }
        paths = []
    }

    private static func removeFiles() {
        let n = paths.count
        guard n > 0 else { return }
        for i in 0..<(n - 1) { unlink(paths[i]) }
        rmdir(paths[n - 1])
    }
}
