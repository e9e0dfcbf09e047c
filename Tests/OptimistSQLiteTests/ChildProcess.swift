#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn, its stdout read line by line through a pipe.
final class ChildProcess {
    let pid: pid_t
    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var atEOF = false
    private var reaped: Int32?

    struct SpawnError: Error { let code: Int32 }

    /// The crash child built next to the test bundle (or named by OPTIMIST_CRASH_CHILD).
    static var crashChildPath: String {
        if let p = getenv("OPTIMIST_CRASH_CHILD") { return String(cString: p) }
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        var exe = n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        while let last = exe.last, last != "/" { exe.removeLast() }
        return exe + "optimist-crash-child"
    }

    convenience init(crashChild args: [String]) throws {
        let path = ChildProcess.crashChildPath
        try self.init(executable: path, [path] + args, quiet: false)
    }

    init(executable: String, _ argv: [String], quiet: Bool) throws {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw SpawnError(code: errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        if quiet { posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2) }
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, nil, cArgs, environ)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            throw SpawnError(code: rc)
        }
        pid = child
        fd = pipeFDs[0]
    }

    deinit {
        if reaped == nil {
            _ = Glibc.kill(pid, SIGKILL)
            _ = wait()
        }
        close(fd)
    }

    /// The next line, or nil at EOF or when `timeoutMs` passes first.
    func readLine(timeoutMs: Int64) -> String? {
        let deadline = monotonicMs() + timeoutMs
        while true {
            if let i = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<i], as: UTF8.self)
                buffer.removeSubrange(...i)
                return line
            }
            if atEOF { return nil }
            let left = deadline - monotonicMs()
            if left <= 0 { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(min(left, 1000)))
            if ready < 0 && errno != EINTR { atEOF = true }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                atEOF = true
            } else {
                buffer.append(contentsOf: chunk[0..<n])
            }
        }
    }

    /// Every remaining line, until the child closes its output.
    func drain() -> [String] {
        var lines = [String]()
        while let l = readLine(timeoutMs: 60_000) { lines.append(l) }
        return lines
    }

    func kill(_ signal: Int32) { _ = Glibc.kill(pid, signal) }

    /// Waits for the child; its exit code, or 128 + the signal that ended it.
    func wait() -> Int32 {
        if let reaped { return reaped }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        reaped = code
        return code
    }
}
