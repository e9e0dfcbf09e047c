/// A sorted sequence that finds, inserts and removes an element by value and answers its
/// position: what a live query needs to turn one record's change into deltas at indexes.
///
/// Elements sit in chunks of at most ``maxChunk``, each sorted, in order; `starts` holds each
/// chunk's first global index. Finding an element is a binary search over the chunks' last
/// elements and one within a chunk (O(log n) comparisons); inserting or removing moves at most
/// one chunk's elements and renumbers the chunks after it (O(chunk + n / chunk) word moves,
/// no comparisons). A flat sorted array would move up to n elements per change.
///
/// The order is a type (``RowOrdering``), not a closure, and compares elements where they
/// are, through pointers into the chunks' buffers: the searches are specialized for it, and
/// no comparison copies an element. Passed by value, every comparison copied the chunk's
/// element (its sort values and key, with their reference counts), which was most of a live
/// query's cost per change.
struct OrderedRows<Order: RowOrdering> {
    typealias Element = Order.Element
    /// No two elements of the sequence compare equal (a row's key breaks every tie).
    let order: Order
    private(set) var chunks: [[Element]] = []
    private var starts: [Int] = []
    private(set) var count = 0

    static var maxChunk: Int { 256 }

    init(_ order: Order) { self.order = order }

    /// Replaces the contents with `sorted` (already in order, no duplicates).
    mutating func load(sorted: [Element]) {
        chunks = []
        starts = []
        count = sorted.count
        var i = 0
        let half = Self.maxChunk / 2
        while i < sorted.count {
            let end = min(sorted.count, i + half)
            starts.append(i)
            chunks.append(Array(sorted[i..<end]))
            i = end
        }
    }

    var isEmpty: Bool { count == 0 }

    subscript(i: Int) -> Element {
        let c = chunkHolding(index: i)
        return chunks[c][i - starts[c]]
    }

    /// The elements at `range` of the global order.
    func elements(_ range: Range<Int>) -> [Element] {
        guard !range.isEmpty else { return [] }
        var out = [Element]()
        out.reserveCapacity(range.count)
        var c = chunkHolding(index: range.lowerBound)
        var i = range.lowerBound - starts[c]
        while out.count < range.count {
            if i == chunks[c].count {
                c += 1
                i = 0
            }
            out.append(chunks[c][i])
            i += 1
        }
        return out
    }

    /// Where `e` is (its global index), if it is there.
    func index(of e: Element) -> Int? {
        guard let (c, i) = position(of: e), holds(e, chunk: c, at: i) else { return nil }
        return starts[c] + i
    }

    /// Whether chunk `c` holds an element equal to `e` at offset `i`.
    private func holds(_ e: Element, chunk c: Int, at i: Int) -> Bool {
        withUnsafePointer(to: e) { pe in
            chunks.withUnsafeBufferPointer { cs in
                cs[c].withUnsafeBufferPointer { chunk in i < chunk.count && order.compare(chunk.baseAddress! + i, pe) == 0 }
            }
        }
    }

    /// The global index of the first element not before `e` (``count`` when every one is).
    func lowerBound(_ e: Element) -> Int {
        guard let (c, i) = position(of: e) else { return count }
        return starts[c] + i
    }

    /// Inserts `e` (not there yet) and returns its global index.
    @discardableResult
    mutating func insert(_ e: Element) -> Int {
        count += 1
        guard let (c, i) = position(of: e) else {
            // Empty, or after every element: onto the last chunk.
            if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.maxChunk {
                starts.append(count - 1)
                chunks.append([e])
            } else {
                chunks[chunks.count - 1].append(e)
            }
            return count - 1
        }
        chunks[c].insert(e, at: i)
        let index = starts[c] + i
        for j in (c + 1)..<starts.count { starts[j] += 1 }
        if chunks[c].count > Self.maxChunk { split(c) }
        return index
    }

    /// Removes `e` if it is there and returns the global index it had.
    @discardableResult
    mutating func remove(_ e: Element) -> Int? {
        guard let (c, i) = position(of: e), holds(e, chunk: c, at: i) else { return nil }
        let index = starts[c] + i
        chunks[c].remove(at: i)
        count -= 1
        for j in (c + 1)..<starts.count { starts[j] -= 1 }
        if chunks[c].isEmpty {
            chunks.remove(at: c)
            starts.remove(at: c)
        }
        return index
    }

    /// The chunk and offset where `e` is or would be inserted; nil when it sorts after every
    /// element.
    private func position(of e: Element) -> (Int, Int)? {
        withUnsafePointer(to: e) { pe in
            chunks.withUnsafeBufferPointer { cs -> (Int, Int)? in
                // The first chunk whose last element is not before `e`.
                var lo = 0, hi = cs.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    let before = cs[mid].withUnsafeBufferPointer { order.compare($0.baseAddress! + ($0.count - 1), pe) < 0 }
                    if before { lo = mid + 1 } else { hi = mid }
                }
                guard lo < cs.count else { return nil }
                let at = cs[lo].withUnsafeBufferPointer { chunk -> Int in
                    let base = chunk.baseAddress!
                    var a = 0, b = chunk.count
                    while a < b {
                        let mid = (a + b) / 2
                        if order.compare(base + mid, pe) < 0 { a = mid + 1 } else { b = mid }
                    }
                    return a
                }
                return (lo, at)
            }
        }
    }

    private func chunkHolding(index i: Int) -> Int {
        precondition(i >= 0 && i < count, "index \(i) out of 0..<\(count)")
        var lo = 0, hi = starts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    private mutating func split(_ c: Int) {
        let half = chunks[c].count / 2
        let tail = Array(chunks[c][half...])
        chunks[c].removeSubrange(half...)
        chunks.insert(tail, at: c + 1)
        starts.insert(starts[c] + half, at: c + 1)
    }
}

/// The order of an ``OrderedRows``' elements, read where they are (no copy of either).
protocol RowOrdering {
    associatedtype Element
    /// Negative, zero or positive as `a` sorts before, with or after `b`.
    func compare(_ a: UnsafePointer<Element>, _ b: UnsafePointer<Element>) -> Int
}

extension RowOrdering {
    /// ``compare(_:_:)`` of two values (sorting elements before ``OrderedRows/load(sorted:)``).
    func compareValues(_ a: Element, _ b: Element) -> Int {
        withUnsafePointer(to: a) { pa in withUnsafePointer(to: b) { compare(pa, $0) } }
    }
}
