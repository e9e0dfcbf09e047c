import Testing
@testable import OptimistCore
@testable import OptimistModel
@testable import OptimistSQLite

/// The writer's queue and its spent list: always the array they replace, through appends,
/// replacements by position, joins, whole blocks and removals from the end.
@Suite struct EntryChunksTests {
    /// An entry that names `n` (ended entries carry an id and compare cheaply).
    private func entry(_ n: UInt64) -> JournalEntry { .ended(id: n, status: .committed) }

    private func ids(_ entries: some Sequence<JournalEntry>) -> [UInt64] {
        entries.map { e -> UInt64 in
            guard case .ended(let id, _) = e else { Issue.record("unexpected entry \(e)"); return 0 }
            return id
        }
    }

    @Test(arguments: [1, 2, 3])
    func staysTheArrayItReplaces(seed start: UInt64) {
        var seed = start
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        var queue = EntryChunks(), model: [UInt64] = []
        var spent = EntryChunks(), spentModel: [UInt64] = []
        var next: UInt64 = 1
        for _ in 0..<30_000 {
            switch random(12) {
            case 0...6:  // appended
                queue.append(entry(next))
                model.append(next)
                next += 1
            case 7 where !model.isEmpty:  // an entry replaced in its place (a mutation ended)
                let at = random(model.count)
                queue[at] = entry(next)
                model[at] = next
                next += 1
            case 8:  // the writer takes the queue and hands it back as spent
                spent.append(contentsOf: queue)
                spentModel += model
                queue = EntryChunks()
                model = []
            case 9:  // a block handed back whole
                let block = (0..<random(3000)).map { _ -> UInt64 in next += 1; return next }
                spent.append(chunk: block.map(entry))
                spentModel += block
            case 10...11:  // a caller frees a few
                let k = random(5)
                spent.removeLast(k)
                spentModel.removeLast(min(k, spentModel.count))
            default: break
            }
            #expect(queue.count == model.count && spent.count == spentModel.count)
        }
        #expect(ids(queue) == model)
        #expect(ids(spent) == spentModel)
        #expect(model.indices.allSatisfy { ids([queue[$0]]) == [model[$0]] })
    }

    @Test func removingMoreThanThereIsEmptiesIt() {
        var spent = EntryChunks()
        spent.append(chunk: (1...10).map(entry))
        spent.append(entry(11))
        spent.removeLast(100)
        #expect(spent.isEmpty && ids(spent).isEmpty)
    }
}

/// The positions of queued mutations: a dictionary's answers, across rounds and pages.
@Suite struct QueuedMutationsTests {
    @Test func answersAsADictionaryWouldAcrossRounds() {
        var table = QueuedMutations()
        var model: [UInt64: Int] = [:]
        var seed: UInt64 = 7
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        var next: UInt64 = 1, position = 0
        for _ in 0..<50_000 {
            switch random(10) {
            case 0...4:  // a new mutation queued
                table.set(next, at: position)
                model[next] = position
                next += 1
                position += 1
            case 5...6:  // an older one queued again (a status change)
                let id = UInt64(random(Int(next))) + 1
                table.set(id, at: position)
                model[id] = position
                position += 1
            case 7...8:  // one ends: its entry's position, once
                let id = UInt64(random(Int(next))) + 1
                #expect(table.take(id) == model.removeValue(forKey: id))
                #expect(table.take(id) == nil)
            default:  // the writer takes the queue
                table.removeAll()
                model.removeAll()
                position = 0
            }
        }
        for id in 1..<next { #expect(table.take(id) == model[id]) }
    }

    /// Ids far apart make pages; a new round keeps only the newest.
    @Test func aRoundKeepsOnlyTheNewestPage() {
        var table = QueuedMutations()
        for page in 0..<5 { table.set(UInt64(page * QueuedMutations.pageSize + 3), at: page) }
        #expect(table.pageCount == 5)
        table.removeAll()
        #expect(table.pageCount == 1)
        #expect(table.take(UInt64(4 * QueuedMutations.pageSize + 3)) == nil)
        table.set(UInt64(4 * QueuedMutations.pageSize + 3), at: 9)
        #expect(table.take(UInt64(4 * QueuedMutations.pageSize + 3)) == 9)
    }
}
