import OptimistModel
import OptimistProtocol

// The wire protocol itself (its messages, their encodings and checks) is the root package's
// OptimistProtocol, shared with the client's sync; this file holds what is the server's own:
// the 400 answer, the cursors it issues, and the ids as its tables keep them.

/// A request the server will not process: answered 400 with the message.
struct BadRequest: Error {
    let message: String
    init(_ message: String) { self.message = message }
    init(_ violation: ProtocolViolation) { message = violation.message }
}

extension PushedMutation {
    /// The id as the tables keep it (a protocol id is below 2^53, so it fits).
    var storedID: Int64 { Int64(id) }
    var storedRetry: Int64 { Int64(retry) }
}

extension PullRequest {
    /// The seq this server wrote as the cursor (nil: from the beginning). Cursors are decimal
    /// seqs; anything else was not issued here.
    func seqCursor() throws(BadRequest) -> Int64? {
        guard let s = cursor else { return nil }
        guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let c = Int64(s) else {
            throw BadRequest("cursor is not one this server issued")
        }
        return c
    }
}

extension PullAnswer {
    /// The reply body: stored values go out as the canonical JSON text they are.
    func encoded() -> [UInt8] {
        PullReply.encode(
            cursor: String(cursor), more: more,
            changes: changes.map { PulledChange(collection: $0.coll, key: $0.key, value: $0.value) },
            outcomes: outcomes.map { o in
                PullOutcome(id: MutationID(o.mutationID),
                            outcome: o.status == .ok ? .ok : .rejected(error: o.error ?? "rejected"),
                            retry: Int(o.retry))
            })
    }
}
