import Foundation
import OptimistCore
import OptimistModel

/// Readers beside a writer, checking at every read that what they see is a state that
/// existed: the writer makes changes that keep invariants (a server batch sets every record
/// of a collection to its round number, and deletes a third of them in even rounds; a
/// mutation writes two records together), and a torn read breaks one of them.
///
/// With `tapping`, a third kind of writer runs beside: a thread that taps (mutates) all the
/// time, each tap patching a record of the batches' collection and writing a pair of
/// records together. Taps run between a staged batch's steps (see `Store`'s locking), so
/// they reach the batch's records before, during and after its publish; every read and
/// every listener must still see whole batches and whole taps.
///
/// Returns the problems seen (empty when none).
package enum ConsistencyRun {
    package static let keys = 3000
    package static let rounds = 10

    /// Records of collection `p` present after round `r` (none before the first).
    static func present(_ r: Int) -> Int { r == 0 ? 0 : (r % 2 == 0 ? keys * 2 / 3 : keys) }

    static func key(_ i: Int) -> Key { Key("k" + String(10_000 + i)) }

    package static func run(_ s: Store, readers: Int = 2, tapping: Bool = false) throws -> [String] {
        let problems = Problems()
        try s.defineView("count", collection: "p", kind: .count)
        try s.defineView("sum", collection: "p", kind: .sum(field: "v"))
        // A listener hears each batch whole, in order.
        let lastRound = Counter()
        try s.subscribe(collection: "p") { changes in
            let values = Set(changes.compactMap { $0.value?["v"]?.number })
            guard changes.count == keys || changes.count == 1 else {
                problems.add("a delivery of \(changes.count) changes")
                return
            }
            guard changes.count == keys else { return }  // the pending edit's own
            guard values.count == 1, let r = values.first else {
                problems.add("a batch delivered torn: \(values.sorted())")
                return
            }
            if Int(r) != lastRound.value + 1 { problems.add("round \(Int(r)) delivered after \(lastRound.value)") }
            lastRound.value = Int(r)
        }
        let done = Flag()
        var threads = [Thread]()
        for t in 0..<readers {
            threads.append(Thread { read(s, seed: UInt64(t), until: done, problems) })
        }
        if tapping { threads.append(Thread { tap(s, until: done, problems) }) }
        let writer = Thread {
            defer { done.set() }
            do {
                var pendingEdit: MutationID?
                for r in 1...rounds {
                    var ops = [Op]()
                    for i in 0..<keys {
                        if r % 2 == 0, i % 3 == 2 {
                            ops.append(.delete(collection: "p", key: key(i)))
                        } else {
                            ops.append(.put(collection: "p", key: key(i), value: ["v": .number(Double(r))]))
                        }
                    }
                    try s.serverApply(ops)
                    // Pairs written together, committed or rolled back; a pending edit kept
                    // across the next batch (its key is refolded when the batch publishes).
                    for j in 0..<50 {
                        let v: Record = ["v": .number(Double(r * 100 + j))]
                        let id = try s.mutate([.put(collection: "q", key: "x1", value: v), .put(collection: "q", key: "x2", value: v)])
                        if j % 2 == 0 { try s.commit(id) } else { try s.rollback(id) }
                    }
                    if let id = pendingEdit { try s.commit(id) }
                    pendingEdit = try s.mutate([.patch(collection: "p", key: key(0), value: ["w": .number(Double(r))])])
                }
            } catch {
                problems.add("writer: \(error)")
            }
        }
        threads.append(writer)
        for th in threads { th.start() }
        while threads.contains(where: { !$0.isFinished }) { usleep(1000) }
        if lastRound.value != rounds { problems.add("listener heard \(lastRound.value) of \(rounds) rounds") }
        return problems.all
    }

    /// One reader's loop: every read checked against the invariants.
    static func read(_ s: Store, seed: UInt64, until done: Flag, _ problems: Problems) {
        var rng = SeededRandom(seed: seed)
        var highest = 0.0  // the newest round seen: batches are atomic, so it never goes back
        var reads = 0
        while !done.isSet || reads < 100 {
            reads += 1
            do {
                switch reads % 5 {
                case 0:
                    let rows = try s.scan("p")
                    let rounds = Set(rows.map { $0.value["v"]?.number ?? -1 })
                    guard rounds.count <= 1 else { problems.add("scan saw rounds \(rounds.sorted())"); return }
                    let r = Int(rounds.first ?? 0)
                    if rows.count != present(r) { problems.add("scan of round \(r) saw \(rows.count) records") }
                    if Double(r) < highest { problems.add("scan saw round \(r) after \(highest)") }
                    highest = max(highest, Double(r))
                case 1:
                    let i = Int(rng.next() % UInt64(keys))
                    if let v = try s.get("p", key(i))?["v"]?.number {
                        if v < highest { problems.add("get saw round \(v) after \(highest)") }
                        highest = max(highest, v)
                    }
                case 2:
                    let sum = try s.viewValue("sum"), count = try s.viewValue("count")
                    let r = (0...rounds).first { Double(present($0)) == count }
                    if r == nil { problems.add("count view \(count)") }
                    if !(0...rounds).contains(where: { Double(present($0) * $0) == sum }) { problems.add("sum view \(sum)") }
                case 3:
                    let pair = try s.scan("q")
                    if pair.count == 2, pair[0].value != pair[1].value { problems.add("pair torn: \(pair)") }
                    let tapped = try s.scan("t")
                    if tapped.count == 1 || (tapped.count == 2 && tapped[0].value != tapped[1].value) {
                        problems.add("tap torn: \(tapped)")
                    }
                default:
                    // From round 2 on, key 0 always carries a pending edit (or the committed
                    // one under the next): a get that misses it read the confirmed record
                    // where the overlay has the key.
                    if let r = try s.get("p", key(0)), let v = r["v"]?.number {
                        if let w = r["w"]?.number, w < v - 1 { problems.add("pending edit of round \(w) on round \(v)") }
                        if v >= 2, r["w"] == nil { problems.add("round \(v) seen without its pending edit") }
                    }
                }
            } catch {
                problems.add("reader: \(error)")
                return
            }
            if problems.count > 20 { return }
        }
    }

    /// The tapping thread's loop (see ``run(_:readers:tapping:)``): from the first batch on,
    /// each tap patches a record no batch deletes (a field no view counts) and puts the pair
    /// `t/a`, `t/b` with the same value, in one mutation; the taps are then committed or
    /// rolled back in turn (those wait for a staged batch; the taps do not).
    static func tap(_ s: Store, until done: Flag, _ problems: Problems) {
        var n = 0
        do {
            while try s.get("p", key(1)) == nil {
                if done.isSet { return }
                usleep(100)
            }
            while !done.isSet {
                n += 1
                let i = 1 + 3 * (n % (keys / 3 - 1))  // i % 3 == 1: never deleted, never key 0
                let v: Record = ["n": .number(Double(n))]
                let id = try s.mutate([.patch(collection: "p", key: key(i), value: ["t": .number(Double(n))]),
                                       .put(collection: "t", key: "a", value: v), .put(collection: "t", key: "b", value: v)])
                if n % 16 == 0 { try s.commit(id) } else if n % 16 == 8 { try s.rollback(id) }
            }
        } catch {
            problems.add("tapper: \(error)")
        }
    }

    final class Problems: @unchecked Sendable {
        private let lock = NSLock()
        private var list = [String]()
        func add(_ p: String) { lock.withLock { list.append(p) } }
        var all: [String] { lock.withLock { list } }
        var count: Int { lock.withLock { list.count } }
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var v = 0
        var value: Int {
            get { lock.withLock { v } }
            set { lock.withLock { v = newValue } }
        }
    }
}
