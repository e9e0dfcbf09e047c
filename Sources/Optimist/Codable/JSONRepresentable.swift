/// A type that chooses its own JSON form in records, over its `Codable` conformance.
///
/// ``RecordEncoder`` and ``RecordDecoder`` ask every value they meet whether it is one, so a
/// conformance applies wherever the type appears: a field, an array element, a nested
/// struct's field. The `OptimistFoundation` module uses it to store `Date` as ISO 8601 text
/// (which other hosts can read and which sorts by time) rather than `Date`'s own `Codable`
/// form, a bare count of seconds since 2001.
public protocol JSONRepresentable {
    /// The value's JSON form.
    ///
    /// - Throws: ``RecordCodingError/Reason/unencodable(_:)`` when it has none.
    func jsonValue() throws(RecordCodingError.Reason) -> JSON

    /// The value read back from its JSON form.
    ///
    /// - Throws: ``RecordCodingError/Reason/typeMismatch(expected:found:)`` or
    ///   ``RecordCodingError/Reason/invalidValue(_:)`` when `json` is not one.
    init(jsonValue json: JSON) throws(RecordCodingError.Reason)
}
