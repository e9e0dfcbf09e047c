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
        var out = [UInt8]()
        out.reserveCapacity(64)
        writeObject(record, into: &out)
        return String(decoding: out, as: UTF8.self)
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
        out.append(UInt8(ascii: "{"))
        var first = true
        for k in o.keys.sorted() {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            writeString(k.string, into: &out)
            out.append(UInt8(ascii: ":"))
            write(o[k]!, into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    public static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        if d.rounded(.towardZero) == d && abs(d) < 9_007_199_254_740_992 {
            out.append(contentsOf: String(Int64(d)).utf8)
        } else {
            out.append(contentsOf: d.description.utf8)
        }
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for c in s.utf8 {
            switch c {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hexDigits[Int(c >> 4)])
                out.append(hexDigits[Int(c & 15)])
            default: out.append(c)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { JSONWriter.string(self) }
}
