import OptimistModel
/// How each ended mutation ended, two bits per id, in pages of 4,096 ids made as ids end in
/// them. Ids are dense and increasing, so a million ended mutations take about 250 KB where a
/// dictionary would take tens of MB; and memory follows the ids that ended, not the highest
/// one, so a damaged store file that names one far-off id costs one page.
///
/// Noncopyable: its pages are objects (the last one stays at hand without a lookup), so a copy
/// would share them.
struct EndedSet: ~Copyable {
    private static let shift = 12
    private static let wordsPerPage = (1 << shift) / 64

    /// One page's bits: `known` in the first half of the words, `committed` in the second.
    /// Raw memory the page owns: an array's bits, set through the page, were checked for a
    /// second owner (and retained) on every mutation that ended.
    private final class Page {
        let words: UnsafeMutablePointer<UInt64>
        init() {
            words = .allocate(capacity: 2 * EndedSet.wordsPerPage)
            words.initialize(repeating: 0, count: 2 * EndedSet.wordsPerPage)
        }
        deinit { words.deallocate() }
    }

    private var pages: [MutationKey: Page] = [:]
    /// The page the last insert went to: mutations end in about the order they started. Not
    /// retained (``pages`` keeps every page for good).
    private var lastNumber: MutationID = .max
    private var last: Unmanaged<Page>?

    init() {}

    /// Where `id`'s bits are: its page's number, the word in each half of the page, the bit.
    @inline(__always) private static func place(_ id: MutationID) -> (page: MutationID, word: Int, bit: UInt64) {
        (id >> shift, Int(truncatingIfNeeded: (id >> 6) & MutationID(wordsPerPage - 1)), UInt64(1) << (id & 63))
    }

    mutating func insert(_ id: MutationID, _ status: MutationStatus) {
        let (number, word, bit) = Self.place(id)
        let words: UnsafeMutablePointer<UInt64>
        if number == lastNumber, let last {
            words = last._withUnsafeGuaranteedRef { $0.words }
        } else {
            let page: Page
            if let found = pages[MutationKey(number)] {
                page = found
            } else {
                page = Page()
                pages[MutationKey(number)] = page
            }
            lastNumber = number
            last = Unmanaged.passUnretained(page)
            words = page.words
        }
        words[word] |= bit
        if status == .committed { words[Self.wordsPerPage + word] |= bit } else { words[Self.wordsPerPage + word] &= ~bit }
    }

    func status(_ id: MutationID) -> MutationStatus? {
        let (number, word, bit) = Self.place(id)
        let words: UnsafeMutablePointer<UInt64>
        if number == lastNumber, let last {
            words = last._withUnsafeGuaranteedRef { $0.words }
        } else {
            guard let page = pages[MutationKey(number)] else { return nil }
            words = page.words
        }
        guard words[word] & bit != 0 else { return nil }
        return words[Self.wordsPerPage + word] & bit != 0 ? .committed : .rolledBack
    }
}
