import Testing
@testable import OptimistCore
@testable import OptimistModel

/// The outbox's queue: always the sorted order a plain array kept, whatever mix of appends,
/// sends from the front, commits from anywhere and re-queued retries it goes through.
@Suite struct DueQueueTests {
    @Test(arguments: [1, 2, 3, 4, 5])
    func staysTheSortedArrayItReplaces(seed start: UInt64) {
        var queue = DueQueue()
        var model = [DueEntry]()
        var seed = start
        var next: UInt64 = 1
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        for _ in 0..<20_000 {
            switch random(10) {
            case 0...3:  // a new mutation
                let e = DueEntry(id: next, queuePosition: next)
                next += 1
                queue.append(e)
                model.append(e)
            case 4...5 where !model.isEmpty:  // the oldest sent or committed
                queue.remove(model.removeFirst())
            case 6 where !model.isEmpty:  // one from anywhere
                queue.remove(model.remove(at: random(model.count)))
            case 7 where !model.isEmpty:  // sent from a position (outbox_next skipping a backing-off one)
                let i = random(min(3, model.count))
                model.remove(at: i)
                queue.remove(at: i)
            case 8:  // a retry re-queued after everything, or a backed-off one back in its place
                let id = UInt64(random(Int(next))) + 1
                let e = DueEntry(id: id, queuePosition: random(2) == 0 ? id : next)
                queue.insert(e)
                if !model.contains(e) {
                    model.append(e)
                    model.sort()
                }
            case 9 where model.count >= 2:  // a push takes the front
                let k = random(min(model.count, 50))
                queue.removeFirst(k)
                model.removeFirst(k)
            default: break
            }
            #expect(queue.count == model.count)
            #expect(queue.first == model.first)
        }
        #expect(Array(queue) == model)
        #expect(Array(queue.prefix(7)) == Array(model.prefix(7)))
    }

    /// Retried mutations going back into the middle of a long queue, until chunks split; then
    /// the front leaves: the order stays the sorted one.
    @Test func middleInsertsSplitChunksInOrder() {
        var queue = DueQueue()
        var model = [DueEntry]()
        for id in stride(from: UInt64(2), through: 20_000, by: 2) {
            let e = DueEntry(id: id, queuePosition: id)
            queue.append(e)
            model.append(e)
        }
        for id in stride(from: UInt64(3), through: 4_001, by: 2) {  // odd ids fall between
            let e = DueEntry(id: id, queuePosition: id)
            queue.insert(e)
            model.append(e)
        }
        model.sort()
        #expect(Array(queue) == model)
        for _ in 0..<3_000 { queue.remove(model.removeFirst()) }
        queue.removeFirst(100)
        model.removeFirst(100)
        #expect(Array(queue) == model)
        #expect(queue.count == model.count && queue.first == model.first)
    }
}
