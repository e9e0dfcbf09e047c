import COptimist
import OptimistModel

extension OptimistError {
    /// The C result code of this error (`OPTIMIST_MISUSE` ...), as Include/optimist.h defines
    /// it: the one table between Swift errors and C numbers, used by the C entry points and by
    /// tests that compare with the codes other hosts see. Not public: Swift callers match the
    /// error's cases.
    package var code: Int32 {
        switch self {
        case .internal: OPTIMIST_ERROR
        case .misuse: OPTIMIST_MISUSE
        case .notFound: OPTIMIST_NOTFOUND
        case .state: OPTIMIST_STATE
        case .invalid: OPTIMIST_INVALID
        case .duplicate: OPTIMIST_DUPLICATE
        case .io: OPTIMIST_IO
        case .corrupt: OPTIMIST_CORRUPT
        case .busy: OPTIMIST_BUSY
        }
    }
}
