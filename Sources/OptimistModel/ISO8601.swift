/// ISO 8601 timestamps for instants given as seconds since 2001-01-01T00:00:00Z (what
/// Foundation's `Date` holds), written and read with integer arithmetic so the core needs no
/// Foundation.
///
/// Written in UTC with the fraction of a second in as many digits as the double needs and no
/// more: `2026-11-22T07:30:00Z`, `2026-11-22T07:30:00.25Z`. Reading the text back gives the
/// same double bit for bit (the whole seconds and the fraction are split exactly, and the
/// fraction's digits are the shortest that parse back to it), except within the one second
/// before 2001-01-01, where the split itself rounds. Reading also accepts an offset
/// (`+02:00`), so text other hosts wrote parses too.
package enum ISO8601 {
    /// Seconds from 1970-01-01 to 2001-01-01.
    static let referenceOffset: Int64 = 978_307_200

    /// The timestamp of `seconds` since 2001, or nil outside years 0001–9999 or not finite.
    package static func format(secondsSinceReference seconds: Double) -> String? {
        guard seconds.isFinite else { return nil }
        let whole = seconds.rounded(.down)
        let fraction = seconds - whole
        // Years 0001...9999 in seconds from 2001, with room to spare for the check below.
        guard abs(whole) < 400_000_000_000, let wholeSeconds = Int64(exactly: whole) else { return nil }
        let unix = wholeSeconds + referenceOffset
        let days = floorDivide(unix, 86_400)
        let secondOfDay = unix - days * 86_400
        let (y, m, d) = civilDate(daysSinceEpoch: days)
        guard (1...9999).contains(y) else { return nil }
        // The fraction's digits as a number and a count (0 digits: none), or as text in the
        // rare case that needs more than 15 of them.
        var fractionValue: Int64 = 0, fractionCount = 0
        var fractionText = ""
        if fraction != 0 {
            if let (v, n) = shortestFraction(fraction, whole: whole, of: seconds) {
                (fractionValue, fractionCount) = (v, n)
            } else {
                fractionText = fractionDigits(fraction, whole: whole, of: seconds)
                fractionCount = fractionText.utf8.count
            }
        }
        // Written straight into the string's own storage: a record's dates are encoded on
        // every put, and building the text from pieces was most of a put's encoding.
        let length = 20 + (fractionCount > 0 ? fractionCount + 1 : 0)
        return String(unsafeUninitializedCapacity: length) { out in
            func put(_ v: Int64, _ at: Int, _ width: Int) {
                var v = v, j = at + width - 1
                while j >= at { out[j] = UInt8(truncatingIfNeeded: 48 + v % 10); v /= 10; j -= 1 }
            }
            put(y, 0, 4); put(m, 5, 2); put(d, 8, 2)
            put(secondOfDay / 3600, 11, 2); put(secondOfDay / 60 % 60, 14, 2); put(secondOfDay % 60, 17, 2)
            out[4] = UInt8(ascii: "-"); out[7] = UInt8(ascii: "-"); out[10] = UInt8(ascii: "T")
            out[13] = UInt8(ascii: ":"); out[16] = UInt8(ascii: ":")
            var i = 19
            if fractionCount > 0 {
                out[i] = UInt8(ascii: ".")
                if fractionText.isEmpty {
                    put(fractionValue, i + 1, fractionCount)
                } else {
                    for (j, b) in fractionText.utf8.enumerated() { out[i + 1 + j] = b }
                }
                i += 1 + fractionCount
            }
            out[i] = UInt8(ascii: "Z")
            return length
        }
    }

    /// Seconds since 2001 of `text`, or nil when it is not `YYYY-MM-DDTHH:MM:SS[.digits]`
    /// followed by `Z` or `±HH:MM`.
    package static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Double? {
        // The fixed part, YYYY-MM-DDTHH:MM:SS, then the optional fraction and the zone.
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let y = number(b, 0, 4), let mo = number(b, 5, 2), let d = number(b, 8, 2),
              let h = number(b, 11, 2), let mi = number(b, 14, 2), let s = number(b, 17, 2) else { return nil }
        guard mo >= 1 && mo <= 12, d >= 1 && d <= daysInMonth(y, mo), h < 24, mi < 60, s < 60 else { return nil }
        var i = 19
        var fraction = 0.0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] &- 48 < 10 { i += 1 }
            let n = i - start
            guard n > 0 else { return nil }
            if n <= 15, let digits = number(b, start, n) {
                // Both numbers are exact doubles (below 2^53 and 10^22), so the division is the
                // correctly rounded value of the decimal: what parsing "0.digits" gives.
                fraction = Double(digits) / powersOfTen[n]
            } else {
                guard let f = Double("0." + String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)) else { return nil }
                fraction = f
            }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            guard i + 6 <= b.count, b[i + 3] == UInt8(ascii: ":"), let oh = number(b, i + 1, 2), let om = number(b, i + 4, 2),
                  oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let unix = daysSinceEpoch(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        // Whole seconds plus the exact fraction: the sum is the original double, so it rounds to it.
        return Double(unix - referenceOffset) + fraction
    }

    /// The decimal number in `b[at..<at+count]`, nil when a byte is not a digit.
    @inline(__always)
    static func number(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int64? {
        var v: Int64 = 0
        for j in at..<(at + count) {
            let digit = b[j] &- 48
            guard digit < 10 else { return nil }
            v = v * 10 + Int64(digit)
        }
        return v
    }

    /// 10^0 ... 10^22, every one an exact double.
    static let powersOfTen: [Double] = (0...22).map { n in (0..<n).reduce(1.0) { p, _ in p * 10 } }

    // MARK: Calendar arithmetic (proleptic Gregorian, days since 1970-01-01)

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    static func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date (the era-based count: 400-year eras of 146,097 days).
    static func daysSinceEpoch(_ y: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y - 1 : y
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (the inverse of ``daysSinceEpoch(_:_:_:)``).
    package static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let d = dayOfYear - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// The fewest digits after "0." (at most 15) of the fraction `f` of `seconds` (= `whole` +
    /// `f`) that give `seconds` back when parsed and added to `whole` (what ``parse(_:)``
    /// does), as a number and a count: 0.123456 is written `.123456`, not as the exact binary
    /// difference's 17 digits. Nil when 15 digits are not enough.
    ///
    /// Tested with arithmetic, not by formatting and parsing text: for up to 15 digits the
    /// digits and 10^n are exact doubles, so their quotient is the correctly rounded value of
    /// the decimal, which is what parsing the text gives.
    static func shortestFraction(_ f: Double, whole: Double, of seconds: Double) -> (Int64, Int)? {
        for n in 1...15 {
            let scale = powersOfTen[n]
            let scaled = (f * scale).rounded()
            guard scaled < scale, scaled > 0 else { continue }
            guard whole + scaled / scale == seconds else { continue }
            var digits = Int64(scaled), count = n
            // Trailing zeros say nothing (.250 is .25).
            while digits % 10 == 0 { digits /= 10; count -= 1 }
            return (digits, count)
        }
        return nil
    }

    /// The digits after "0." of the fraction `f` of `seconds` (= `whole` + `f`): the fewest
    /// that give `seconds` back when parsed and added to `whole` (what ``parse(_:)`` does), so
    /// 0.123456 reads as `.123456`, not as the exact binary difference's 17 digits.
    static func fractionDigits(_ f: Double, whole: Double, of seconds: Double) -> String {
        var scale = 1.0
        for n in 1...17 {
            scale *= 10
            let scaled = (f * scale).rounded()
            guard scaled < scale, scaled > 0 else { continue }
            var digits = String(Int64(scaled))
            digits = String(repeating: "0", count: n - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            if let back = Double("0." + digits), whole + back == seconds { return digits }
        }
        // Fractions below 1e-17 (instants that close to 2001-01-01) need more than 17 fixed
        // digits: Swift's shortest form of `f` itself, which parses back to `f` exactly.
        let text = f.description  // "0.25" or "1.1920928955078125e-07"
        guard let e = text.firstIndex(of: "e") else { return String(text.dropFirst(2)) }
        let mantissa = String(text[..<e].filter { $0 != "." })
        let exponent = Int(text[text.index(after: e)...])!  // negative: f < 1
        return String(repeating: "0", count: -exponent - 1) + mantissa
    }
}
