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

/// The cursors this server issues: `<identity>.<seq>`, the identity of the database that
/// issued it (32 hex digits, chosen at random when its schema was created) and the seq of the
/// last write the client holds. Clients keep them as opaque text. A cursor that does not name
/// this database (another database's, an earlier server's plain seq, a garbled one) says
/// nothing about what the client holds: its pull starts over with a reset.
enum Cursor {
    static func text(identity: String, seq: Int64) -> String { "\(identity).\(seq)" }

    /// Where a pull's cursor starts it in this database.
    enum Position: Equatable {
        /// No cursor: from the beginning (no reset: the client holds nothing yet).
        case start
        /// After this seq of this database.
        case after(Int64)
        /// Not a cursor of this database.
        case foreign
    }

    static func position(of cursor: String?, identity: String) -> Position {
        guard let cursor else { return .start }
        let bytes = Array(cursor.utf8)
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), String(decoding: bytes[..<dot], as: UTF8.self) == identity else {
            return .foreign
        }
        let digits = bytes[(dot + 1)...]
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let seq = Int64(String(decoding: digits, as: UTF8.self)) else { return .foreign }
        return .after(seq)
    }

    /// A new database identity: 128 random bits as 32 hex digits.
    static func newIdentity() -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for _ in 0..<2 {
            let v = rng.next() as UInt64
            for i in 0..<16 { out.append(digits[Int((v >> UInt64(60 - 4 * i)) & 0xf)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension PullAnswer {
    /// The reply body: stored values go out as the canonical JSON text they are.
    func encoded() -> [UInt8] {
        PullReply.encode(
            cursor: Cursor.text(identity: identity, seq: cursor), more: more,
            changes: changes.map { PulledChange(collection: $0.coll, key: $0.key, value: $0.value) },
            outcomes: outcomes.map { o in
                PullOutcome(id: MutationID(o.mutationID),
                            outcome: o.status == .ok ? .ok : .rejected(error: o.error ?? "rejected"),
                            retry: Int(o.retry))
            },
            reset: reset)
    }
}

/// The bytes of a record as one change of a pull reply (``PullReply/encode``):
/// `{"coll":C,"key":K,"op":"put","value":V}` or `{"coll":C,"key":K,"op":"delete"}`.
enum ChangeSize {
    static func of(coll: String, key: String, value: String?) -> Int64 {
        let names = JSONWriter.string(.string(coll)).utf8.count + JSONWriter.string(.string(key)).utf8.count
        if let value { return Int64(36 + names + value.utf8.count) }
        return Int64(30 + names)
    }
}
