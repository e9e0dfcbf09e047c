/// Every failure a store reports. Each case stands for one C result code (named in its comment).
public enum OptimistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An internal failure (a bug): `OPTIMIST_ERROR`.
    case `internal`(String)
    /// A bad argument or a closed store: `OPTIMIST_MISUSE`.
    case misuse(String)
    /// No such record, mutation, view or subscription; nothing due: `OPTIMIST_NOTFOUND`.
    case notFound(String)
    /// The mutation is not in a state that allows this: `OPTIMIST_STATE`.
    case state(String)
    /// Malformed JSON or UTF-8, not an object, an op that cannot apply, a mutation over a limit
    /// (`Limits`): `OPTIMIST_INVALID`.
    case invalid(String)
    /// A not-yet-ended mutation holds the same dedupe key: `OPTIMIST_DUPLICATE`.
    case duplicate(existing: MutationID)
    /// The disk said no: `OPTIMIST_IO`.
    case io(String)
    /// Not an Optimist store, or damaged: `OPTIMIST_CORRUPT`.
    case corrupt(String)
    /// The store file is held by another process: `OPTIMIST_BUSY`.
    case busy(String)

    public var message: String {
        switch self {
        case .internal(let m), .misuse(let m), .notFound(let m), .state(let m), .invalid(let m),
             .io(let m), .corrupt(let m), .busy(let m):
            m
        case .duplicate(let id): "a not-yet-ended mutation (\(id)) holds this dedupe key"
        }
    }

    public var description: String { message }
}
