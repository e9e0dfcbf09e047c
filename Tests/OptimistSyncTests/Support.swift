import Synchronization
import OptimistCore
import OptimistSync
import OptimistModel
import OptimistOpen
#if canImport(Glibc)
import Glibc
#endif

/// Collects listener batches across threads.
final class ChangeLog: @unchecked Sendable {
    private let m = Mutex<[[Change]]>([])
    func append(_ b: [Change]) { m.withLock { $0.append(b) } }
    var all: [[Change]] { m.withLock { $0 } }
}

/// A temporary directory, removed with its files when the value goes away.
final class TempDir {
    let path: String
    init() {
        var template = Array("/tmp/optimist-sync-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }
    func file(_ name: String) -> String { "\(path)/\(name)" }
    deinit {
        if let d = opendir(path) {
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink("\(path)/\(name)") }
            }
            closedir(d)
        }
        rmdir(path)
    }
}
