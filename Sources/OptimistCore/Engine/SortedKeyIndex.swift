import OptimistModel
/// The keys of one collection in byte order, for prefix scans.
///
/// Inserts must stay O(1) whatever the collection's size, so new keys wait in an unsorted
/// buffer and are merged in by the next scan; removed keys are dropped lazily (a scan skips
/// keys the collection no longer has, and a merge compacts them away). A store that is never
/// scanned merges once the buffer outgrows the sorted keys (``needsMerge``), so memory stays
/// proportional to the collection, not to the number of inserts ever made.
struct SortedKeyIndex {
    private(set) var sorted: [Key] = []
    private var added: [Key] = []
    private var removals = 0

    mutating func insert(_ key: Key) { added.append(key) }
    mutating func noteRemoval() { removals += 1 }

    /// Whether the unsorted buffer has grown enough that merging it now costs O(1) per insert.
    var needsMerge: Bool { added.count >= max(4096, sorted.count) }
    /// Keys waiting in the unsorted buffer (for tests).
    var unmergedCount: Int { added.count }

    /// Brings `sorted` up to date; `contains` says which keys still exist.
    mutating func prepare(contains: (Key) -> Bool) {
        if added.isEmpty && removals * 4 <= sorted.count { return }
        added.removeAll { !contains($0) }  // gone already (a tap rolled back): not worth sorting
        added.sort()
        var merged = [Key]()
        merged.reserveCapacity(sorted.count + added.count)
        var i = 0, j = 0
        while i < sorted.count || j < added.count {
            let next: Key
            if j == added.count || (i < sorted.count && sorted[i] < added[j]) {
                next = sorted[i]; i += 1
            } else {
                next = added[j]; j += 1
            }
            if let last = merged.last, last == next { continue }
            if contains(next) { merged.append(next) }
        }
        sorted = merged
        added.removeAll(keepingCapacity: true)
        removals = 0
    }

    /// Index of the first key not less than `key`; call after ``prepare(contains:)``.
    func lowerBound(_ key: Key) -> Int {
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
