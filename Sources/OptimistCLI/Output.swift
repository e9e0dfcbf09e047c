#if canImport(Glibc)
import Glibc
#endif
import OptimistModel

/// Writing to stdout (buffered) and stderr, with plain `write` calls (the tool runs on one
/// thread).
enum Output {
    nonisolated(unsafe) private static var pending = [UInt8]()

    static func line(_ s: String = "") {
        pending.append(contentsOf: s.utf8)
        pending.append(0x0A)
        if pending.count >= 1 << 16 { flush() }
    }

    static func json(_ value: JSON) {
        JSONWriter.write(value, into: &pending)
        pending.append(0x0A)
        if pending.count >= 1 << 16 { flush() }
    }

    static func flush() {
        writeAll(1, pending)
        pending.removeAll(keepingCapacity: true)
    }

    static func error(_ s: String) {
        flush()
        writeAll(2, Array("optimist: \(s)\n".utf8))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { b in
            var done = 0
            while done < b.count {
                let n = write(fd, b.baseAddress! + done, b.count - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                done += n
            }
        }
    }

    /// Rows under a header, each column as wide as its widest cell; the last column is not
    /// padded.
    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for r in rows { for (i, cell) in r.enumerated() { widths[i] = max(widths[i], cell.count) } }
        for r in [header] + rows {
            var text = ""
            for (i, cell) in r.enumerated() {
                text += i == r.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
            }
            line(text)
        }
    }

    /// "label   value" lines with the labels aligned.
    static func facts(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows {
            line(label.isEmpty ? String(repeating: " ", count: width + 2) + value
                               : label + String(repeating: " ", count: width - label.count + 2) + value)
        }
    }
}

/// Short human forms of values.
enum Show {
    /// 1536 → "1.5 KiB".
    static func bytes(_ n: Int64) -> String {
        if n < 1024 { return "\(n) bytes" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var v = Double(n) / 1024, u = 0
        while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[u])"
    }

    /// A record as canonical JSON; nil as `absent`.
    static func value(_ r: Record?, absent: String) -> String { r.map { JSONWriter.string($0) } ?? absent }

    /// An op in a line: `incr habits/run count +1`, `put logs/k {"n":1}`; `withAddress`
    /// false leaves out the collection and key (explain shows one record).
    static func op(_ op: Op, withAddress: Bool = true) -> String {
        let at = withAddress ? " \(op.collection)/\(op.key)" : ""
        switch op {
        case .put(_, _, let v): return "put\(at) \(JSONWriter.string(v))"
        case .patch(_, _, let v): return "patch\(at) \(JSONWriter.string(v))"
        case .delete: return "delete\(at)"
        case .incr(_, _, let f, let d):
            var n = [UInt8]()
            JSONWriter.writeNumber(d, into: &n)
            return "incr\(at) \(f) \(d >= 0 ? "+" : "")\(String(decoding: n, as: UTF8.self))"
        }
    }

    /// `text` cut to `limit` characters, with "..." when cut.
    static func cut(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 3)) + "..."
    }

    /// A time on the app's clock (ms): as is, with the UTC date when it looks like one
    /// (2001 to 2286 in Unix milliseconds).
    static func time(_ ms: Int64) -> String {
        guard ms >= 1_000_000_000_000 && ms < 10_000_000_000_000 else { return "\(ms)" }
        let seconds = ms / 1000
        let (y, m, d) = ISO8601.civilDate(daysSinceEpoch: seconds / 86_400)  // the same calendar as dates in records
        let s = seconds % 86_400
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(ms) (\(y)-\(two(m))-\(two(d)) \(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60)) UTC)"
    }
}
