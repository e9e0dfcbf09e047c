#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OptimistModel

// Strings crossing the boundary. In: borrowed NUL-terminated UTF-8, validated before use.
// Out: malloc'd copies the caller releases with `optimist_free`.

/// A required string argument: NULL is `.misuse`, bytes that are not UTF-8 are `.invalid`.
@inline(__always) func text(_ p: UnsafePointer<CChar>?, _ what: StaticString) throws(OptimistError) -> String {
    guard let p else { throw isNull(what) }
    return try utf8(p, what)
}

/// ``text(_:_:)``, its UTF-8 byte count written to `count` (a record's text field, for a
/// `Limits/Tally`). The count goes out through an `inout` integer rather than in a tuple
/// with the string: a tuple holding a string cost the tap retains and releases.
@inline(__always) func text(_ p: UnsafePointer<CChar>?, _ what: StaticString, count: inout Int) throws(OptimistError) -> String {
    guard let p else { throw isNull(what) }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    guard isASCII(bytes) || isValidUTF8(bytes) else { throw notUTF8(what) }
    count = bytes.count
    return stringFromValidUTF8(bytes)
}

/// An optional string argument: NULL stays nil; bytes that are not UTF-8 are `.invalid`.
func optionalText(_ p: UnsafePointer<CChar>?, _ what: StaticString) throws(OptimistError) -> String? {
    guard let p else { return nil }
    return try utf8(p, what)
}

/// A required key, collection, field or view name.
@inline(__always) func key(_ p: UnsafePointer<CChar>?, _ what: StaticString) throws(OptimistError) -> Key {
    var count = 0
    return try key(p, what, count: &count)
}

/// A required key, collection, field or view name, its UTF-8 byte count (the length `strlen`
/// already gave) written to `count`: a mutation's `Limits/Tally` counts it, so
/// `Limits/maxNameBytes` costs a tap a compare. Inlined into each entry point (a tap makes
/// seven: the collection, the key, five field names), its errors built out of line.
@inline(__always) func key(_ p: UnsafePointer<CChar>?, _ what: StaticString, count: inout Int) throws(OptimistError) -> Key {
    guard let p else { throw isNull(what) }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    guard isASCII(bytes) || isValidUTF8(bytes) else { throw notUTF8(what) }
    let h = Key.hash(bytes)
    count = bytes.count
    return Key(stringFromValidUTF8(bytes), bytesHash: h)
}

@inline(never) func isNull(_ what: StaticString) -> OptimistError { .misuse("\(what) is NULL") }

@inline(never) func notUTF8(_ what: StaticString) -> OptimistError { .invalid("\(what) is not valid UTF-8") }

/// A key prefix; NULL means "" (every key).
func prefix(_ p: UnsafePointer<CChar>?, _ what: StaticString) throws(OptimistError) -> Key {
    Key(try optionalText(p, what) ?? "")
}

@inline(__always) private func utf8(_ p: UnsafePointer<CChar>, _ what: StaticString) throws(OptimistError) -> String {
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    // The core's validator: the standard library's validating initializer is generic and
    // several times slower on this hot path (every key of every op).
    guard isASCII(bytes) || isValidUTF8(bytes) else { throw notUTF8(what) }
    return stringFromValidUTF8(bytes)
}

/// A required JSON object argument, parsed straight from the caller's bytes (the parser
/// rejects invalid UTF-8, trailing data and nesting deeper than its limit), with what a
/// `Limits/Tally` needs of it: its deepest nesting (the record is level 1, tracked by the
/// parser) written to `depth`, and an upper bound of its canonical text (from the text's
/// length) to `bytes`.
func record(_ p: UnsafePointer<CChar>?, _ what: StaticString, depth: inout Int, bytes: inout Int) throws(OptimistError) -> Record {
    guard let p else { throw .misuse("\(what) is NULL") }
    let text = UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    do {
        let r = try JSONParser.parseObject(text, depth: &depth)
        bytes = Limits.Tally.jsonBytes(length: text.count)
        return r
    } catch {
        throw .invalid("\(what): \(error)")
    }
}

/// A malloc'd NUL-terminated copy of `s` for the caller to free with `optimist_free`.
/// Strings handed out (canonical JSON, client ids) never contain a NUL byte.
func handOut(_ s: String) throws(OptimistError) -> UnsafeMutablePointer<CChar> {
    guard let copy = strdup(s) else { throw .internal("out of memory") }
    return copy
}

/// Checks a required out-parameter.
func out<T>(_ p: UnsafeMutablePointer<T>?, _ what: StaticString) throws(OptimistError) -> UnsafeMutablePointer<T> {
    guard let p else { throw .misuse("\(what) is NULL") }
    return p
}
