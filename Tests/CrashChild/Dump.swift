import OptimistModel
import OptimistCore
import OptimistOpen

/// A canonical text of everything a reopened store must reproduce: visible and confirmed
/// records, pending flags, every mutation's status and (when live) its ops, attempts, dedupe
/// key, policy and last error, the pending count and the freshness of every key.
///
/// Inflight reads as pending (a reopened store sends them again) and next-attempt times are
/// left out (their jitter is random per store).
///
/// Ended mutations enter as one sum of their lines' fingerprints (order does not matter, ids
/// are unique), and `ended` caches those fingerprints (an ended mutation never changes
/// again), so the model's dump after every step stays cheap.
func dump(_ s: Store, ended: inout [MutationID: UInt64]) throws(OptimistError) -> String {
    var out = ""
    for c in Workload.collections {
        for (k, v) in try s.scan(c) { out += "V \(c) \(k) \(JSONWriter.string(v))\n" }
        for k in Workload.keys {
            if let v = try s.confirmed(c, k) { out += "C \(c) \(k) \(JSONWriter.string(v))\n" }
            if try s.isPending(c, k) { out += "P \(c) \(k)\n" }
            for age in [0, 250_000, 10_000_000] as [Int64] {
                if !(try s.needsReload(c, k, now: 600_000, maxAge: age)) { out += "L \(c) \(k) \(age)\n" }
            }
        }
    }
    var id: MutationID = 1
    var endedSum: UInt64 = 0
    while true {
        if let h = ended[id] {
            endedSum &+= h
            id += 1
            continue
        }
        let status: MutationStatus
        do { status = try s.status(id) } catch { break }
        if !status.isEnded {
            let m = try s.mutation(id)
            let st = status == .inflight ? MutationStatus.pending : status
            out += "M \(id) \(st) \(m.attempts) \(m.dedupeKey ?? "-") \(m.policy) \(m.lastError ?? "-") \(Op.encode(m.ops))\n"
        } else {
            let h = fingerprint("E \(id) \(status)")
            ended[id] = h
            endedSum &+= h
        }
        id += 1
    }
    out += "E \(endedSum)\nN \(try s.pendingCount())\n"
    return out
}

/// FNV-1a, 64 bits: a short fingerprint of a dump to print per step.
func fingerprint(_ text: String) -> UInt64 {
    var s = text
    return s.withUTF8 { bytes in
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}
