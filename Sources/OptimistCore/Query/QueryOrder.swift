import OptimistModel

/// The one total order over JSON values that queries sort, group and compare by.
public enum QueryOrder {}

extension QueryOrder {
    /// The rank of a value's kind: missing < null < false < true < numbers < strings < arrays
    /// < objects.
    @inline(__always) static func rank(_ v: JSON?) -> Int {
        switch v {
        case nil: 0
        case .null?: 1
        case .bool(false)?: 2
        case .bool(true)?: 3
        case .number?: 4
        case .string?: 5
        case .array?: 6
        case .object?: 7
        }
    }

    /// The total order: missing (nil) < null < false < true < numbers (by value, so 1 and 1.0
    /// tie) < strings (bytewise UTF-8) < arrays < objects. Arrays and objects compare by their
    /// canonical JSON text, bytewise (no whitespace, members sorted bytewise by name, integral
    /// numbers without a fraction): an order every host can reproduce from the text alone.
    /// Returns a negative number, 0 or a positive number.
    public static func compare(_ a: JSON?, _ b: JSON?) -> Int {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.number(let x)?, .number(let y)?): return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let x)?, .string(let y)?): return compareBytes(x, y)
        case (.array?, .array?), (.object?, .object?):
            // Equal values have equal text: skip writing it (the common case in a group's
            // tie or a row's unchanged sort value).
            if equal(a, b) { return 0 }
            return compareText(canonical(a!), canonical(b!))
        default: return 0  // missing, null, false, true: one value per rank
        }
    }

    /// JSON equality, as `eq`, `ne` and `in` use it: numbers by value (1 equals 1.0), strings
    /// byte for byte, arrays element by element, objects member by member whatever their
    /// order. Agrees with ``compare(_:_:)``: equal exactly when it answers 0.
    public static func equal(_ a: JSON?, _ b: JSON?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (.null?, .null?): return true
        case (.bool(let x)?, .bool(let y)?): return x == y
        case (.number(let x)?, .number(let y)?): return x == y
        // Bytewise, not Swift's `==` (which takes canonically equivalent strings as equal),
        // so that equality and the bytewise order agree.
        case (.string(let x)?, .string(let y)?): return compareBytes(x, y) == 0
        case (.array(let x)?, .array(let y)?):
            guard x.count == y.count else { return false }
            for i in x.indices where !equal(x[i], y[i]) { return false }
            return true
        case (.object(let x)?, .object(let y)?):
            guard x.count == y.count else { return false }
            for (name, value) in x {
                guard let other = y[name], equal(value, other) else { return false }
            }
            return true
        default: return false
        }
    }

    /// The canonical JSON text of a value as UTF-8 bytes.
    static func canonical(_ v: JSON) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64)
        JSONWriter.write(v, into: &out)
        return out
    }

    static func compareText(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let n = Swift.min(x.count, y.count)
        var i = 0
        while i < n {
            if x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
            i += 1
        }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }
}
