import OptimistCore
import OptimistModel

/// Where in the writer's queue the latest `.mutation` entry of each queued mutation sits: in
/// pages of 4,096 ids, since ids are handed out in rising order and most queued ones are recent.
///
/// A dictionary grew with the queue beside a big server batch (the writer busy with the batch,
/// the taps' mutations piling up), and the tap whose insert crossed its capacity rehashed all of
/// it under the writers' lock. Here an insert touches one page, made when the first id in it is
/// queued; emptying the table for the next round is O(1) (each slot carries the round it was
/// written in) and keeps the newest page for the ids that come next.
struct QueuedMutations {
    private struct Slot {
        var round: UInt32
        var position: UInt32
    }

    private final class Page {
        @exclusivity(unchecked) var slots = [Slot](repeating: Slot(round: 0, position: 0), count: QueuedMutations.pageSize)
    }

    static let pageBits = 12
    static let pageSize = 1 << pageBits

    private var pages: [UInt64: Page] = [:]
    /// The page used last and its number: most entries are of the newest mutations.
    private var recentNumber: UInt64 = .max
    private var recent: Page?
    /// Slots written in another round are empty. Starts at 1, so a new page's slots are empty.
    private var round: UInt32 = 1

    @inline(__always) private mutating func page(_ number: UInt64, making: Bool) -> Page? {
        if number == recentNumber, let p = recent { return p }
        var p = pages[number]
        if p == nil, making {
            p = Page()
            pages[number] = p
        }
        if let p {
            recentNumber = number
            recent = p
        }
        return p
    }

    /// Notes that mutation `id`'s latest entry is at `position` in the queue.
    @inline(__always) mutating func set(_ id: MutationID, at position: Int) {
        let p = page(id >> UInt64(Self.pageBits), making: true)!
        p.slots[Int(id & UInt64(Self.pageSize - 1))] = Slot(round: round, position: UInt32(truncatingIfNeeded: position))
    }

    /// The position noted for `id` in this round, forgotten as it is returned.
    @inline(__always) mutating func take(_ id: MutationID) -> Int? {
        guard let p = page(id >> UInt64(Self.pageBits), making: false) else { return nil }
        let i = Int(id & UInt64(Self.pageSize - 1))
        let s = p.slots[i]
        guard s.round == round else { return nil }
        p.slots[i].round = 0
        return Int(s.position)
    }

    /// Forgets every position (the writer took the queue): O(pages), keeping the newest page.
    mutating func removeAll() {
        round &+= 1
        if round == 0 {
            // Wrapped: slots of an old round 1, 2, ... would read as current; start afresh.
            round = 1
            pages.removeAll()
            recent = nil
            recentNumber = .max
            return
        }
        guard pages.count > 1 else { return }
        let newest = pages.keys.max()!
        let keep = pages[newest]!
        pages.removeAll(keepingCapacity: true)
        pages[newest] = keep
        recent = keep
        recentNumber = newest
    }

    /// Pages held (for tests).
    var pageCount: Int { pages.count }
}
