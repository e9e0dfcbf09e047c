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
    private final class Page {
        @exclusivity(unchecked) var words = [UInt64](repeating: 0, count: 2 * EndedSet.wordsPerPage)
    }

    private var pages: [MutationKey: Page] = [:]
    /// The page the last insert went to: mutations end in about the order they started.
    private var lastNumber: MutationID = .max
    private var last: Page?

    init() {}

    /// Where `id`'s bits are: its page's number, the word in each half of the page, the bit.
    @inline(__always) private static func place(_ id: MutationID) -> (page: MutationID, word: Int, bit: UInt64) {
        (id >> shift, Int(truncatingIfNeeded: (id >> 6) & MutationID(wordsPerPage - 1)), UInt64(1) << (id & 63))
    }

    mutating func insert(_ id: MutationID, _ status: MutationStatus) {
        let (number, word, bit) = Self.place(id)
        let page: Page
        if number == lastNumber, let last {
            page = last
        } else if let found = pages[MutationKey(number)] {
            page = found
        } else {
            page = Page()
            pages[MutationKey(number)] = page
        }
        lastNumber = number
        last = page
        page.words[word] |= bit
        if status == .committed { page.words[Self.wordsPerPage + word] |= bit } else { page.words[Self.wordsPerPage + word] &= ~bit }
    }

    func status(_ id: MutationID) -> MutationStatus? {
        let (number, word, bit) = Self.place(id)
        guard let page = number == lastNumber ? last : pages[MutationKey(number)] else { return nil }
        guard page.words[word] & bit != 0 else { return nil }
        return page.words[Self.wordsPerPage + word] & bit != 0 ? .committed : .rolledBack
    }
}
