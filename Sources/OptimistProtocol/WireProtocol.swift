import OptimistModel

/// The wire protocol between a client's sync and a server (docs/protocol.md), written once:
/// every message is a type with its encoding and its decoding, used by the sync
/// (`OptimistSync`) and by the reference server (`Server/`).
///
/// A decoder checks a message whole before anything of it is used, and says what is wrong in
/// a ``ProtocolViolation``: a client changes nothing in its store on a reply that is not the
/// protocol, a server answers 400 to a request that is not.
public enum WireProtocol {
    /// The version this library's requests carry as `protocol`: 2, which adds shared spaces
    /// (a collection `S/NAME` lives in the space `S`) and the `drop` of a pull reply.
    public static let version = 2
    /// Every version a server of this module answers: 1 (the user's private space only) and 2.
    public static let versions: ClosedRange<Int> = 1...2
    /// The largest integer a JSON number (a double) carries exactly: mutation ids and retry
    /// counts are whole numbers from 0 to this.
    public static let maxInteger: UInt64 = (1 << 53) - 1
    /// The longest `client_id`, in UTF-8 bytes.
    public static let maxClientIDBytes = 200

    /// The body of an error answer: `{"error": message}`.
    public static func errorBody(_ message: String) -> String {
        JSONWriter.string(["error": .string(message)])
    }
}

/// Something in a message that is not the protocol.
public struct ProtocolViolation: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The status of one pushed mutation in a push reply (`status`), and of an outcome in a pull
/// reply (`ok` or `rejected` there).
public enum WireStatus: String, Sendable, CaseIterable {
    /// Applied.
    case ok
    /// Refused for good.
    case rejected
    /// Refused for now: send it again later (push replies only).
    case retry
}

/// The pieces every message is made of: one spelling of each check.
enum Wire {
    /// The members every request has, `protocol` (1 or 2) and `client_id`: the object, the id
    /// and the version.
    static func envelope(_ body: JSON) throws(ProtocolViolation) -> ([Key: JSON], String, Int) {
        guard case .object(let object) = body else { throw ProtocolViolation("the body must be a JSON object") }
        guard let version = object["protocol"] else { throw ProtocolViolation("protocol is missing") }
        guard case .number(let v) = version, let n = Int(exactly: v), WireProtocol.versions.contains(n) else {
            throw ProtocolViolation("unsupported protocol \(JSONWriter.string(version)) (this server speaks "
                                    + "\(WireProtocol.versions.lowerBound) to \(WireProtocol.versions.upperBound))")
        }
        guard case .string(let clientID)? = object["client_id"] else { throw ProtocolViolation("client_id must be a string") }
        guard !clientID.isEmpty, clientID.utf8.count <= WireProtocol.maxClientIDBytes, !clientID.utf8.contains(0) else {
            throw ProtocolViolation("client_id must be 1 to \(WireProtocol.maxClientIDBytes) bytes without U+0000")
        }
        return (object, clientID, n)
    }

    /// A reply's top-level object.
    static func object(_ body: String) throws(ProtocolViolation) -> [Key: JSON] {
        let value: JSON
        do { value = try JSONParser.parse(body) } catch { throw ProtocolViolation("the reply is not JSON: \(error)") }
        guard case .object(let o) = value else { throw ProtocolViolation("the reply is not a JSON object") }
        return o
    }

    /// A whole number from 0 to 2^53 - 1 in a request (an id or a retry count).
    static func integer(_ value: JSON?, _ what: String) throws(ProtocolViolation) -> UInt64 {
        guard case .number(let d)? = value else { throw ProtocolViolation("\(what) must be a number") }
        guard d >= 0, d <= Double(WireProtocol.maxInteger), d.rounded(.towardZero) == d else {
            throw ProtocolViolation("\(what) must be a whole number from 0 to 2^53-1")
        }
        return UInt64(d)
    }

    /// A mutation id in a reply: a positive whole number below 2^53.
    static func mutationID(_ j: JSON?, _ what: String) throws(ProtocolViolation) -> MutationID {
        guard case .number(let d)? = j, d >= 1, d <= Double(WireProtocol.maxInteger), d == d.rounded() else {
            throw ProtocolViolation("\(what) needs a positive integer id")
        }
        return MutationID(d)
    }

    static func op(_ j: JSON, _ what: String) throws(ProtocolViolation) -> Op {
        do { return try Op(json: j) } catch { throw ProtocolViolation("\(what): \(error.message)") }
    }

    /// An optional `error` text.
    static func text(_ j: JSON?) throws(ProtocolViolation) -> String? {
        switch j {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw ProtocolViolation("error must be a string")
        }
    }

    /// An optional `retry_after_ms` (capped at a day).
    static func milliseconds(_ j: JSON?, _ what: String) throws(ProtocolViolation) -> Int64? {
        switch j {
        case nil, .null?: return nil
        case .number(let d)? where d >= 0 && d.isFinite: return Int64(min(d, 86_400_000))
        default: throw ProtocolViolation("\(what): retry_after_ms must be a number of milliseconds")
        }
    }

    /// An optional retry count in a reply.
    static func count(_ j: JSON?, _ what: String) throws(ProtocolViolation) -> Int? {
        switch j {
        case nil, .null?: return nil
        case .number(let d)? where d >= 0 && d < 1e15 && d == d.rounded(): return Int(d)
        default: throw ProtocolViolation("\(what): retry must be a whole number")
        }
    }

    static func number(_ n: some BinaryInteger) -> JSON { .number(Double(n)) }
}
