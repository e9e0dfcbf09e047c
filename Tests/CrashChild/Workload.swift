import OptimistModel
import OptimistCore
import OptimistOpen

/// splitmix64: a tiny seeded generator, so the child and its model replay make the same calls.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// The deterministic sequence of store calls the crash tests replay: one store call per step,
/// so a state reached by a file store after a crash is the state after some whole step.
struct Workload {
    static let collections: [Key] = ["a", "b"]
    static let keys: [Key] = (0..<12).map { Key($0 < 10 ? "k0\($0)" : "k\($0)") }

    var random: SeededRandom
    /// Ids that were live when last looked at.
    var ids: [MutationID] = []

    init(seed: UInt64) { random = SeededRandom(state: seed) }

    /// Step times are far apart, so every backoff has elapsed by the next step whatever its
    /// random jitter: the outbox behaves the same in the child and in the model.
    static func now(_ step: Int) -> Int64 { Int64(step) * 100_000 }

    /// Mostly a live mutation (so the live set stays small), sometimes any id ever handed out
    /// or one never handed out (to exercise the errors).
    mutating func pickID(_ store: Store) -> MutationID {
        ids.removeAll { (try? store.status($0))?.isEnded != false }
        switch random.below(10) {
        case 0: return MutationID(1 + random.below(Int(ids.last ?? 1) + 2))
        default: return ids.isEmpty ? 1 : ids[random.below(ids.count)]
        }
    }

    mutating func record() -> Record {
        var r: Record = ["n": .number(Double(random.below(100)))]
        if random.below(3) == 0 { r["s"] = .string("v\(random.below(10))") }
        if random.below(4) == 0 { r["n"] = .string("text") }
        return r
    }

    mutating func op() -> Op {
        let c = Workload.collections[random.below(2)], k = Workload.keys[random.below(Workload.keys.count)]
        switch random.below(4) {
        case 0: return .put(collection: c, key: k, value: record())
        case 1: return .patch(collection: c, key: k, value: random.below(2) == 0 ? record() : ["s": .null])
        case 2: return .delete(collection: c, key: k)
        default: return .incr(collection: c, key: k, field: "n", delta: Double(random.below(9)) - 4)
        }
    }

    mutating func ops(_ n: Int) -> [Op] { (0..<n).map { _ in op() } }

    /// Runs step `step` on `store`. Errors that are part of the semantics (unknown or ended
    /// ids, duplicates, ops that cannot apply) are expected and ignored: they change nothing
    /// and happen identically in the model. Any other error is returned.
    mutating func run(step: Int, on store: Store) -> OptimistError? {
        do throws(OptimistError) {
            switch random.below(100) {
            case 0..<32:
                let dedupe = random.below(4) == 0 ? "d\(random.below(4))" : nil
                let policy: FailurePolicy = random.below(3) == 0 ? .keep : .rollback
                ids.append(try store.mutate(ops(1 + random.below(3)), dedupeKey: dedupe, policy: policy))
            case 32..<55:
                let id = pickID(store)
                try store.commit(id, serverOps: random.below(3) == 0 ? ops(1 + random.below(2)) : nil)
            case 55..<64:
                try store.rollback(pickID(store), reason: "no")
            case 64..<73:
                try store.serverApply(ops(1 + random.below(2)))
            case 73..<83:
                _ = try store.outboxNext(now: Workload.now(step))
            case 83..<92:
                try store.fail(pickID(store), transient: random.below(3) != 0, reason: "e\(step)", now: Workload.now(step))
            case 92..<96:
                try store.retry(pickID(store))
            default:
                let c = Workload.collections[random.below(2)]
                let a = Workload.keys[random.below(6)], b = Workload.keys[6 + random.below(6)]
                try store.markLoaded(c, from: a, to: b, at: Workload.now(step))
            }
        } catch {
            switch error {
            case .notFound, .state, .invalid, .duplicate: return nil
            default: return error
            }
        }
        return nil
    }

    /// Whether the child flushes after `step` (independent of the calls' random stream).
    static func flushes(after step: Int, seed: UInt64) -> Bool {
        var r = SeededRandom(state: seed ^ UInt64(step) &* 0xD6E8_FEB8_6659_FD93)
        return r.below(8) == 0
    }
}
