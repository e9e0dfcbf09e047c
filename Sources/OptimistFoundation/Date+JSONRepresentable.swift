#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Optimist
import OptimistModel

// This module exists so the library that C and Python load (liboptimist.so, built from
// OptimistC) never links Foundation: only Swift apps, which have Foundation anyway, get it,
// through the `Optimist` product.

/// A date in a record is ISO 8601 text in UTC, `"2026-11-22T07:30:00Z"` (with a fraction of a
/// second when it has one): readable by every host, and sorting as text sorts it by time (for
/// dates written with the same number of fraction digits). Reading gives back the same `Date`
/// bit for bit; text with an offset (`+02:00`) written by another host reads too.
extension Date: JSONRepresentable {
    public func jsonValue() throws(RecordCodingError.Reason) -> JSON {
        guard let text = ISO8601.format(secondsSinceReference: timeIntervalSinceReferenceDate) else {
            throw .unencodable("\(timeIntervalSinceReferenceDate) s since 2001 is outside years 0001-9999")
        }
        return .string(text)
    }

    public init(jsonValue json: JSON) throws(RecordCodingError.Reason) {
        guard case .string(let text) = json else {
            if case .null = json { throw .missing }
            throw .typeMismatch(expected: "an ISO 8601 date string", found: "\(json)")
        }
        guard let seconds = ISO8601.parse(text) else {
            throw .invalidValue("\"\(text)\" is not an ISO 8601 date (YYYY-MM-DDTHH:MM:SS[.fff]Z)")
        }
        self.init(timeIntervalSinceReferenceDate: seconds)
    }
}
