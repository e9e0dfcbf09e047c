#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OptimistModel

/// The bytes of a file, nil when it cannot be read. (Plain stdio: the server needs nothing
/// else from Foundation.)
func readFile(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n > 0 { bytes += chunk[0..<n] }
        if n < chunk.count { return ferror(f) == 0 ? bytes : nil }
    }
}

/// Writes one line to standard output at once (no stdio buffer to flush: a test reading the
/// port from a pipe sees the line as soon as the server listens).
func writeLine(toStandardOutput line: String) {
    var bytes = Array((line + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}

/// The JSON value of `bytes` (a file's, a token part's).
func parseJSON(_ bytes: [UInt8]) throws(JSONParser.Failure) -> JSON {
    try bytes.withUnsafeBufferPointer { (b) throws(JSONParser.Failure) in try JSONParser.parse(b) }
}
