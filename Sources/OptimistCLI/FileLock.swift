#if canImport(Glibc)
import Glibc
#endif

/// Which process, if any, holds SQLite's lock on a store file: asked with `F_GETLK`, which
/// only tests for a conflicting lock and takes none (the holder is not disturbed).
///
/// SQLite locks bytes of a range starting at 1 GiB (its "pending byte", then the reserved
/// byte and 510 shared bytes); a store that a process has open holds them exclusively.
func lockHolder(_ path: String) -> Int32? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = 0x4000_0000
    lock.l_len = 512
    guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
    return lock.l_pid
}
