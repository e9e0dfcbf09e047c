import Foundation
import Synchronization
import Testing
import Optimist
@testable import OptimistCore

/// Typed live queries while a thread taps and the main thread applies server batches (staged,
/// so taps run between their steps): listeners run on each call's own thread, so deliveries
/// may arrive in either order. ``LiveResults`` and ``LiveGroups`` apply them in the order of
/// their calls (numbered deliveries), so at the end their rows are the query's rows.
@Suite struct TypedQueryThreadsTests {
    struct Item: Codable, Sendable, Equatable {
        var n: Int
        var tag: String
    }

    @Test(arguments: 0..<12)
    func typedRowsAndGroupsFollowTwoThreads(seed: Int) throws {
        let store = Store()
        store.stagingThreshold = 1
        let items = store.collection("a", of: Item.self)
        let top = try items.query().filter(\.n, .ge, 0).sorted(by: \.n, descending: true).limit(5).live()
        let all = try items.query().sorted(by: \.tag).live()
        let groups = try items.query().grouped(by: \.tag).count(as: "c").sum(\.n, as: "s").live()
        let keys = (0..<30).map { Key("k\($0)") }
        let done = Atomic<Bool>(false), finished = Atomic<Bool>(false)
        let tapper = Thread {
            defer { finished.store(true, ordering: .releasing) }
            var g = SystemRandomNumberGenerator()
            var pending = [MutationID]()
            while !done.load(ordering: .acquiring) {
                let item = Item(n: Int.random(in: -3...9, using: &g), tag: "t\(Int.random(in: 0..<3, using: &g))")
                if let id = try? items.put(item, at: keys.randomElement(using: &g)!) { pending.append(id) }
                if pending.count > 4 {
                    let id = pending.removeFirst()
                    if Bool.random(using: &g) { _ = try? store.commit(id) } else { _ = try? store.rollback(id) }
                }
            }
            for id in pending { _ = try? store.rollback(id) }
        }
        tapper.start()
        for round in 0..<50 {
            let ops: [Op] = keys.shuffled().prefix(5 + (round * 7 + seed) % 20).map { k in
                .put(collection: "a", key: k, value: ["n": .number(Double((round + seed) % 13 - 3)), "tag": .string("t\(round % 3)")])
            }
            try store.serverApply(ops)
        }
        done.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
        // What the store's own queries hold now (read under its lock, no deltas involved).
        let topRows = try store.query(top.spec).rows().compactMap(\.key)
        let allRows = try store.query(all.spec).rows().compactMap(\.key)
        let groupRows = try store.query(groups.spec).rows()
        #expect(top.rows.map(\.key) == topRows)
        #expect(all.rows.map(\.key) == allRows)
        #expect(groups.rows.map { QueryRow.group(group: $0.group, values: $0.values) } == groupRows)
    }
}
