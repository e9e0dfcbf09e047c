import Foundation
import Synchronization
import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// Live queries while staged server batches and taps interleave on two threads: taps run
/// between a staged batch's steps, on the keys the batch changes, pending or not. A query finds
/// a changed record's row from its value before the call, so what the batch tells it must be
/// what the tap left, not what the batch read: at the end, each query's rows equal a
/// brute-force evaluation.
///
/// Listeners run outside the store's locks on the thread of each call, so the two threads'
/// deliveries can arrive in either order: a mirror that applies them in the order of their
/// numbers (``LiveQuery/subscribeNumbered(_:)``) must equal the rows too.
@Suite struct LiveQueryThreadsTests {
    static let specs = [
        #"{"collection": "a", "where": {"field": "n", "ge": 0}, "order": [{"field": "n", "desc": true}], "limit": 3}"#,
        #"{"collection": "a", "order": [{"field": "tag"}, {"field": "n"}]}"#,
        #"{"collection": "a", "where": {"status": "pending"}, "order": [{"field": "n"}]}"#,
        #"{"collection": "a", "group": {"by": ["tag"], "aggregates": {"c": "count", "s": "sum:n", "hi": "max:n"}}}"#,
    ]

    @Test(arguments: 0..<24)
    func stagedBatchesAndTapsInterleaved(seed: Int) throws {
        let s = Store()
        s.stagingThreshold = 1
        let keys = (0..<40).map { Key("k\($0)") }
        var queries = [LiveQuery]()
        var mirrors = [NumberedMirror]()
        for text in Self.specs {
            let q = try s.query(json: text)
            let mirror = NumberedMirror()
            let (rows, _, delivered) = try q.rowsAndSubscribeNumbered { n, deltas in mirror.take(n, deltas) }
            mirror.start(rows, after: delivered)
            queries.append(q)
            mirrors.append(mirror)
        }
        let done = Atomic<Bool>(false), finished = Atomic<Bool>(false)
        let tapper = Thread {
            defer { finished.store(true, ordering: .releasing) }
            var g = SeededRandom(seed: UInt64(seed) &+ 99)
            var pending = [MutationID]()
            while !done.load(ordering: .acquiring) {
                let k = keys.randomElement(using: &g)!
                let n = JSON.number(Double(Int.random(in: -3...9, using: &g)))
                if let id = try? s.mutate([.put(collection: "a", key: k, value: ["n": n, "tag": .string("t\(Int.random(in: 0..<3, using: &g))")])]) {
                    pending.append(id)
                }
                if pending.count > 4 {
                    let id = pending.removeFirst()
                    if Bool.random(using: &g) { _ = try? s.commit(id) } else { _ = try? s.rollback(id) }
                }
            }
            for id in pending { _ = try? s.rollback(id) }
        }
        tapper.start()
        var g = SeededRandom(seed: UInt64(seed))
        for _ in 0..<60 {
            let ops: [Op] = keys.shuffled(using: &g).prefix(Int.random(in: 5...30, using: &g)).map { k in
                Int.random(in: 0..<5, using: &g) == 0
                    ? .delete(collection: "a", key: k)
                    : .put(collection: "a", key: k, value: ["n": .number(Double(Int.random(in: -3...9, using: &g))),
                                                           "tag": .string("t\(Int.random(in: 0..<3, using: &g))")])
            }
            try s.serverApply(ops)
        }
        done.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
        for (i, q) in queries.enumerated() {
            let want = try LiveQueryRun.expectedRows(s, q.spec)
            #expect(try q.rows() == want, "query \(i)")
            #expect(try q.count() == want.count, "query \(i)'s count")
            #expect(mirrors[i].rows == want, "query \(i)'s mirror, its deltas applied in the order of their numbers")
        }
        try s.close()
    }
}

/// A query's rows rebuilt from numbered deliveries, each applied once those before it were.
final class NumberedMirror: @unchecked Sendable {
    private let lock = NSLock()
    private var current: [QueryRow] = []
    private var applied: UInt64?
    private var waiting: [UInt64: [QueryDelta]] = [:]

    func start(_ rows: [QueryRow], after delivered: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        current = rows
        applied = delivered
        waiting = waiting.filter { $0.key > delivered }
        drain()
    }

    func take(_ number: UInt64, _ deltas: [QueryDelta]) {
        lock.lock()
        defer { lock.unlock() }
        waiting[number] = deltas
        drain()
    }

    var rows: [QueryRow] {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    private func drain() {
        guard var n = applied else { return }
        while let next = waiting.removeValue(forKey: n + 1) {
            QueryDelta.apply(next, to: &current)
            n += 1
        }
        applied = n
    }
}
