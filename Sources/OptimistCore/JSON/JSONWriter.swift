/// Writes canonical JSON: compact, object members sorted bytewise by name, integral numbers
/// below 2^53 without a fraction, other numbers in Swift's shortest round-trip form.
/// Canonical output lets every host compare results as plain strings.
public enum JSONWriter {
    public static func string(_ value: JSON) -> String {
        var out = [UInt8]()
        out.reserveCapacity(64)
        write(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func string(_ record: Record) -> String {
        String(decoding: bytes(record), as: UTF8.self)
    }

    /// The canonical JSON of `record` as UTF-8 bytes, for callers that copy them out (the C
    /// ABI) and need no `String`.
    package static func bytes(_ record: Record) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)  // most records fit: one allocation, no regrowth
        writeObject(record, into: &out)
        return out
    }

    public static func write(_ value: JSON, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .number(let d): writeNumber(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (n, v) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(v, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let o): writeObject(o, into: &out)
        }
    }

    public static func writeObject(_ o: [Key: JSON], into out: inout [UInt8]) {
        writeObject(o, into: &out, sorted: true)
    }

    /// An object's members in canonical (bytewise) order, or, with `sorted: false`, in the
    /// dictionary's own order: for bytes only the engine reads back (an in-memory store's
    /// records), where sorting the names would be most of the cost of writing a record.
    package static func writeObject(_ o: [Key: JSON], into out: inout [UInt8], sorted: Bool) {
        out.append(UInt8(ascii: "{"))
        var first = true
        if sorted && o.count > 1 {
            // The members sorted as pairs: sorting the names and looking each value up again
            // would hash every name a second time. Records have few members, where an
            // insertion sort costs a fraction of the general sort's setup.
            var members = Array(o)
            if members.count <= 16 {
                for i in 1..<members.count {
                    let m = members[i]
                    var j = i
                    while j > 0 && m.key < members[j - 1].key {
                        members[j] = members[j - 1]
                        j -= 1
                    }
                    members[j] = m
                }
            } else {
                members.sort { $0.key < $1.key }
            }
            for (k, v) in members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(k.string, into: &out)
                out.append(UInt8(ascii: ":"))
                write(v, into: &out, sorted: true)
            }
        } else {
            for (k, v) in o {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(k.string, into: &out)
                out.append(UInt8(ascii: ":"))
                write(v, into: &out, sorted: sorted)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    static func write(_ value: JSON, into out: inout [UInt8], sorted: Bool) {
        if case .object(let o) = value { writeObject(o, into: &out, sorted: sorted) } else if case .array(let items) = value, !sorted {
            out.append(UInt8(ascii: "["))
            for (n, v) in items.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(v, into: &out, sorted: false)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            write(value, into: &out)
        }
    }

    public static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        if d.rounded(.towardZero) == d && abs(d) < 9_007_199_254_740_992 {
            writeInteger(Int64(d), into: &out)
        } else {
            out.append(contentsOf: d.description.utf8)
        }
    }

    /// Decimal digits without building a `String` first.
    static func writeInteger(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        var m = n.magnitude
        if m < 10 { out.append(UInt8(ascii: "0") + UInt8(m)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while m > 0 {
                buf[23 - count] = UInt8(ascii: "0") + UInt8(m % 10)
                m /= 10
                count += 1
            }
            out.append(contentsOf: buf[(24 - count)...])
        }
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Most strings need no escape: copy them whole.
            guard bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                out.append(contentsOf: bytes)
                return
            }
            for c in bytes {
                switch c {
                case 0x22: out.append(0x5C); out.append(0x22)
                case 0x5C: out.append(0x5C); out.append(0x5C)
                case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
                case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    out.append(hexDigits[Int(c >> 4)])
                    out.append(hexDigits[Int(c & 15)])
                default: out.append(c)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { JSONWriter.string(self) }
}
