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
        // Written into bytes: a record's dates are encoded on every put, and string
        // concatenation of padded pieces was most of the cost.
        var out = [UInt8](repeating: 0, count: 19)
        func put(_ v: Int64, _ at: Int, _ width: Int) {
            var v = v
            for j in stride(from: at + width - 1, through: at, by: -1) { out[j] = UInt8(48 + v % 10); v /= 10 }
        }
        put(y, 0, 4); put(m, 5, 2); put(d, 8, 2)
        put(secondOfDay / 3600, 11, 2); put(secondOfDay / 60 % 60, 14, 2); put(secondOfDay % 60, 17, 2)
        out[4] = UInt8(ascii: "-"); out[7] = UInt8(ascii: "-"); out[10] = UInt8(ascii: "T")
        out[13] = UInt8(ascii: ":"); out[16] = UInt8(ascii: ":")
        var text = String(decoding: out, as: UTF8.self)
        if fraction != 0 { text += "." + fractionDigits(fraction, whole: whole, of: seconds) }
        return text + "Z"
    }

    /// Seconds since 2001 of `text`, or nil when it is not `YYYY-MM-DDTHH:MM:SS[.digits]`
    /// followed by `Z` or `±HH:MM`.
    package static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= b.count else { return nil }
            var v: Int64 = 0
            for j in i..<(i + n) {
                guard (48...57).contains(b[j]) else { return nil }
                v = v * 10 + Int64(b[j] - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = digits(4), expect(UInt8(ascii: "-")), let mo = digits(2), expect(UInt8(ascii: "-")),
              let d = digits(2), expect(UInt8(ascii: "T")), let h = digits(2), expect(UInt8(ascii: ":")),
              let mi = digits(2), expect(UInt8(ascii: ":")), let s = digits(2) else { return nil }
        guard (1...12).contains(mo), (1...daysInMonth(y, mo)).contains(d), h < 24, mi < 60, s < 60 else { return nil }
        var fraction = 0.0
        if expect(UInt8(ascii: ".")) {
            let start = i
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
            guard i > start, let f = Double("0." + String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)) else { return nil }
            fraction = f
        }
        var offset: Int64 = 0
        if expect(UInt8(ascii: "Z")) {
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = digits(2), expect(UInt8(ascii: ":")), let om = digits(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let unix = daysSinceEpoch(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        // Whole seconds plus the exact fraction: the sum is the original double, so it rounds to it.
        return Double(unix - referenceOffset) + fraction
    }

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
    static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
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
