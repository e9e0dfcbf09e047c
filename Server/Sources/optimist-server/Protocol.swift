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

    /// Protocol 2's cursors name every space a client holds: `<identity>.2.<private seq>`, then
    /// `,<name as hex>:<seq>` for each shared space, in the order of the names' bytes. A space
    /// the cursor does not name is one the client holds nothing of (it joined since: its
    /// records come from the start); a space it names that the user no longer sees is dropped.
    struct Spaces: Equatable {
        var privateSeq: Int64 = 0
        var shared: [String: Int64] = [:]
    }

    static func text(identity: String, spaces: Spaces) -> String {
        var out = "\(identity).2.\(spaces.privateSeq)"
        for name in spaces.shared.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out += ","
            for b in name.utf8 { out += hex(b) }
            out += ":\(spaces.shared[name]!)"
        }
        return out
    }

    /// Where a protocol 2 pull's cursor starts it in this database.
    enum SpacesPosition: Equatable {
        case start
        case at(Spaces)
        /// Not a protocol 2 cursor of this database (a protocol 1 cursor included).
        case foreign
    }

    static func spacesPosition(of cursor: String?, identity: String) -> SpacesPosition {
        guard let cursor else { return .start }
        let prefix = identity + ".2."
        guard cursor.utf8.starts(with: prefix.utf8) else { return .foreign }
        var spaces = Spaces()
        for (n, entry) in cursor.utf8.dropFirst(prefix.utf8.count).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).enumerated() {
            if n == 0 {
                guard let seq = number(entry) else { return .foreign }
                spaces.privateSeq = seq
                continue
            }
            let parts = entry.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            guard parts.count == 2, let name = unhex(parts[0]), SpaceName.isValid(name), let seq = number(parts[1]),
                  spaces.shared.updateValue(seq, forKey: name) == nil else { return .foreign }
        }
        return .at(spaces)
    }

    private static func number(_ digits: some Collection<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func hex(_ b: UInt8) -> String {
        String(decoding: [hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xf)]], as: UTF8.self)
    }

    private static func unhex(_ text: some Collection<UInt8>) -> String? {
        guard !text.isEmpty, text.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        var high: UInt8?
        for c in text {
            guard let v = hexDigits.firstIndex(of: c) else { return nil }
            if let h = high {
                bytes.append(h << 4 | UInt8(v))
                high = nil
            } else {
                high = UInt8(v)
            }
        }
        return String(validating: bytes, as: UTF8.self)
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
            cursor: cursor, more: more,
            changes: changes.map { PulledChange(collection: $0.coll, key: $0.key, value: $0.value) },
            outcomes: outcomes.map { o in
                PullOutcome(id: MutationID(o.mutationID),
                            outcome: o.status == .ok ? .ok : .rejected(error: o.error ?? "rejected"),
                            retry: Int(o.retry))
            },
            reset: reset, drop: drop)
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
