import OptimistModel

/// `optimist outbox FILE`: the stored mutations not yet ended.
enum Outbox {
    static func run(_ inv: Invocation, _ store: StoreReader) throws(CLIError) {
        let list = try store.mutations(status: inv.status)
        if inv.json {
            Output.json(.array(list.map(\.json)))
            return
        }
        guard !list.isEmpty else {
            Output.line(inv.status.map { "no \($0) mutations" } ?? "no mutations waiting: everything is confirmed")
            return
        }
        let rows = list.map { m -> [String] in
            [
                "\(m.id)",
                m.status.description,
                "\(m.attempts)",
                nextAttempt(m),
                m.policy.description,
                m.dedupeKey ?? "-",
                m.lastError.map { Show.cut($0, 40) } ?? "-",
                Show.cut(m.ops.map { Show.op($0) }.joined(separator: "; "), 70),
            ]
        }
        Output.table(["ID", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "POLICY", "DEDUPE", "LAST ERROR", "OPS"], rows)
    }

    /// When the sender may take it next: only pending mutations wait for a time.
    static func nextAttempt(_ m: MutationRecord) -> String {
        switch m.status {
        case .pending: m.nextAttemptAt <= 0 ? "now" : Show.time(m.nextAttemptAt)
        case .inflight: "- (sent)"
        default: "- (waits for retry)"
        }
    }
}
