/// The live mutations by id: pages of 4,096 consecutive ids, each an array of slots, found by
/// page number.
///
/// A dictionary of every live mutation regrew all at once: with a big backlog (a sync that
/// cannot send, a burst of taps beside a pull), the tap that crossed 2^k x 0.75 mutations
/// rehashed the whole table inside its hold of the store's locks: 20 ms at 393k pending on
/// the 2-vCPU VM, 60-80 ms on a slower 16-core machine (Benchmarks/C/writers.c). Ids are
/// handed out in order, so here a new mutation fills the next slot of the newest page and a
/// table never regrows more than its page directory (a few hundred entries); a page goes
/// when its last mutation ends (but the newest, which the next ids fill).
struct LiveTable {
    private final class Page {
        @exclusivity(unchecked) var slots: [LiveMutation?]
        @exclusivity(unchecked) var used = 0
        init() { slots = Array(repeating: nil, count: LiveTable.pageSize) }
    }

    static let pageBits = 12
    static let pageSize = 1 << pageBits

    private var pages: [UInt64: Page] = [:]
    /// The page used last, and its number: most lookups are of the newest mutations. Not
    /// retained (``pages`` keeps it), so a lookup costs no retain and release of the page.
    private var recentNumber: UInt64 = .max
    private var recentPage: Unmanaged<Page>?
    /// The older page a removal found last, likewise: commits end the oldest mutations, in
    /// about id order, while taps fill the newest page (each commit looked its page up twice).
    private var olderNumber: UInt64 = .max
    private var olderPage: Unmanaged<Page>?
    private(set) var count = 0
    /// The highest page number made: kept when it empties, since the next ids fall in it (a
    /// tap and its rollback, one after the other, would make and free a 32 KB page each).
    private var newest: UInt64 = 0

    @inline(__always) private func page(_ number: UInt64) -> Page? {
        if recentNumber == number, let p = recentPage { return p.takeUnretainedValue() }
        if olderNumber == number, let p = olderPage { return p.takeUnretainedValue() }
        return pages[number]
    }

    subscript(key: MutationKey) -> LiveMutation? {
        @inline(__always) get {
            let number = key.id >> UInt64(Self.pageBits), slot = Int(key.id & UInt64(Self.pageSize - 1))
            if recentNumber == number, let p = recentPage { return p._withUnsafeGuaranteedRef { $0.slots[slot] } }
            if olderNumber == number, let p = olderPage { return p._withUnsafeGuaranteedRef { $0.slots[slot] } }
            return pages[number]?.slots[slot]
        }
        set {
            if let newValue { insert(newValue, key) } else { removeValue(forKey: key) }
        }
    }

    @inline(__always) private mutating func insert(_ m: LiveMutation, _ key: MutationKey) {
        let number = key.id >> UInt64(Self.pageBits)
        let p: Page
        if let known = page(number) {
            p = known
        } else {
            p = Page()
            pages[number] = p
            newest = max(newest, number)
        }
        recentNumber = number
        recentPage = Unmanaged.passUnretained(p)
        let slot = Int(key.id & UInt64(Self.pageSize - 1))
        if p.slots[slot] == nil {
            p.used += 1
            count += 1
        }
        p.slots[slot] = m
    }

    @discardableResult
    mutating func removeValue(forKey key: MutationKey) -> LiveMutation? {
        let number = key.id >> UInt64(Self.pageBits)
        guard let p = page(number) else { return nil }
        if number != recentNumber {
            olderNumber = number
            olderPage = Unmanaged.passUnretained(p)
        }
        let slot = Int(key.id & UInt64(Self.pageSize - 1))
        guard let m = p.slots[slot] else { return nil }
        p.slots[slot] = nil
        p.used -= 1
        count -= 1
        if p.used == 0 && number < newest {
            if recentNumber == number {
                recentNumber = .max
                recentPage = nil
            }
            if olderNumber == number {
                olderNumber = .max
                olderPage = nil
            }
            pages.removeValue(forKey: number)
        }
        return m
    }

    /// Every live mutation, in id order.
    var values: [LiveMutation] {
        var out = [LiveMutation]()
        out.reserveCapacity(count)
        for number in pages.keys.sorted() {
            for case let m? in pages[number]!.slots { out.append(m) }
        }
        return out
    }
}
