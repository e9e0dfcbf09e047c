/// Why the tool stops. Each case has its exit status (see `optimist --help`).
enum CLIError: Error {
    /// Bad command line: exit status 2.
    case usage(String)
    /// The file is no Optimist store (empty, not SQLite, another program's database).
    case notAStore(String)
    /// An Optimist store whose contents do not decode.
    case damaged(String)
    /// Missing, not readable, or it would not hold still long enough to be read.
    case unreadable(String)

    var exitStatus: Int32 {
        switch self {
        case .usage: 2
        case .notAStore, .damaged, .unreadable: 1
        }
    }

    /// The line printed on stderr (after "optimist: ").
    func describe(file: String?) -> String {
        let subject = file.map { "\($0): " } ?? ""
        switch self {
        case .usage(let m): return m
        case .notAStore(let m): return "\(subject)not an Optimist store: \(m)"
        case .damaged(let m): return "\(subject)a damaged Optimist store: \(m)"
        case .unreadable(let m): return "\(subject)cannot read it: \(m)"
        }
    }
}
