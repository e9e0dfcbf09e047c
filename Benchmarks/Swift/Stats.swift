import Glibc

/// Summary of a list of timings: the median is the headline, p99 the tail, and the
/// inter-quartile range plus min/max the spread, so a reader can judge how noisy a figure is.
struct Summary {
    let reps: Int
    let median, p99, p25, p75, min, max, mean: Double  // microseconds

    init(ns samples: [UInt64]) {
        precondition(!samples.isEmpty, "no samples")
        let s = samples.sorted()
        func q(_ p: Double) -> Double {
            // Nearest-rank quantile: the smallest sample with at least p of the samples at or below it.
            let rank = Swift.max(1, Int((p * Double(s.count)).rounded(.up)))
            return Double(s[Swift.min(rank, s.count) - 1]) / 1000
        }
        reps = s.count
        median = q(0.5); p99 = q(0.99); p25 = q(0.25); p75 = q(0.75)
        min = Double(s.first!) / 1000; max = Double(s.last!) / 1000
        mean = Double(s.reduce(0, &+)) / Double(s.count) / 1000
    }

    /// The fields every result line carries.
    var fields: [(String, JSONValue)] {
        [("median_us", .num(median)), ("p99_us", .num(p99)), ("p25_us", .num(p25)), ("p75_us", .num(p75)),
         ("min_us", .num(min)), ("max_us", .num(max)), ("mean_us", .num(mean)), ("reps", .int(reps))]
    }
}

/// The few JSON shapes a result line needs; written by hand to keep the bench free of Foundation.
enum JSONValue {
    case num(Double), int(Int), str(String), bool(Bool)

    var text: String {
        switch self {
        case .num(let d):
            guard d.isFinite else { return "null" }
            return String((d * 1000).rounded() / 1000)
        case .int(let i): return String(i)
        case .bool(let b): return b ? "true" : "false"
        case .str(let s):
            var out = "\""
            for ch in s.unicodeScalars {
                switch ch {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                default: out.unicodeScalars.append(ch)
                }
            }
            return out + "\""
        }
    }
}

/// Prints one JSON object on one line: the run script collects these from every host.
func emit(_ fields: [(String, JSONValue)]) {
    let body = fields.map { "\(JSONValue.str($0.0).text):\($0.1.text)" }.joined(separator: ",")
    print("{\(body)}")
}

/// Progress for humans goes to stderr so stdout stays pure JSON lines.
func note(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
}
