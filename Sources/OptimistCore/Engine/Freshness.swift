import OptimistModel
/// A key range loaded from the authority at a time (ms): keys `from...to`, both inclusive.
public struct LoadedRange: Sendable, Equatable {
    public var from: Key
    public var to: Key
    public var at: Int64

    public init(from: Key, to: Key, at: Int64) {
        self.from = from
        self.to = to
        self.at = at
    }

    func contains(_ key: Key) -> Bool { !(key < from) && !(to < key) }
}

/// The loaded ranges of one collection.
struct Freshness {
    private(set) var ranges: [LoadedRange] = []

    mutating func mark(_ range: LoadedRange) {
        // A newer load of a covering range makes older ranges inside it redundant.
        ranges.removeAll { !($0.from < range.from) && !(range.to < $0.to) && $0.at <= range.at }
        ranges.append(range)
    }

    func needsReload(_ key: Key, now: Int64, maxAge: Int64) -> Bool {
        for r in ranges where r.contains(key) {
            let age = now.subtractingReportingOverflow(r.at)
            if !age.overflow && age.partialValue <= maxAge { return false }
        }
        return true
    }
}
