import OptimistModel

/// An index's sort key: a value's place in the queries' total order (``QueryOrder``) as bytes,
/// so that comparing two keys byte by byte (`memcmp`, then the shorter first: how SQLite
/// compares BLOBs) orders them as ``QueryOrder/compare(_:_:)`` orders the values.
///
/// The first byte is the value's kind, in the order's ranks (missing 0x01, null 0x02, false
/// 0x03, true 0x04, numbers 0x05, strings 0x06, arrays 0x07, objects 0x08). A number follows
/// as its 8 IEEE bytes big-endian, the sign bit flipped for positives and every bit for
/// negatives (so they sort as the numbers do; -0 is written as 0, which it equals). A string
/// follows as its UTF-8 bytes, an array or object as its canonical JSON text; in both each
/// 0x00 byte is written 0x00 0xFF and the end is 0x00 0x00, so no key is a prefix of another
/// and a shorter string still sorts first.
///
/// Stored in a store file's index rows: this layout is part of the file format.
package enum IndexKey {
    static let missing: UInt8 = 0x01, null: UInt8 = 0x02, falseByte: UInt8 = 0x03, trueByte: UInt8 = 0x04
    static let number: UInt8 = 0x05, string: UInt8 = 0x06, array: UInt8 = 0x07, object: UInt8 = 0x08

    /// The sort key of `value` (nil: the field is missing).
    package static func encode(_ value: JSON?) -> [UInt8] {
        var out = [UInt8]()
        append(value, to: &out)
        return out
    }

    package static func append(_ value: JSON?, to out: inout [UInt8]) {
        switch value {
        case nil: out.append(missing)
        case .null?: out.append(null)
        case .bool(let b)?: out.append(b ? trueByte : falseByte)
        case .number(let x)?:
            out.append(number)
            let bits = (x == 0 ? 0.0 : x).bitPattern  // -0 equals 0
            let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: ordered >> UInt64(shift))) }
        case .string(let s)?:
            out.append(string)
            var s = s
            s.withUTF8 { appendEscaped($0, to: &out) }
        case .array(let items)?:
            out.append(array)
            QueryOrder.canonical(.array(items)).withUnsafeBufferPointer { appendEscaped($0, to: &out) }
        case .object(let members)?:
            out.append(object)
            QueryOrder.canonical(.object(members)).withUnsafeBufferPointer { appendEscaped($0, to: &out) }
        }
    }

    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count + 2)
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(0)
    }

    /// Whether `a` sorts before `b` (bytewise, a prefix first).
    package static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool { compare(a, b) < 0 }

    /// -1, 0 or 1 as `a` sorts before, with or after `b` (bytewise, a prefix first): the
    /// comparison ``QueryOrder`` makes of canonical texts.
    package static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int { QueryOrder.compareText(a, b) }
}

/// A span of index sort keys: from `lower` (inclusive) to `upper` (exclusive; nil: to the end).
package struct IndexBounds: Sendable, Equatable {
    package var lower: [UInt8]
    package var upper: [UInt8]?

    package init(lower: [UInt8], upper: [UInt8]?) {
        self.lower = lower
        self.upper = upper
    }

    package func contains(_ sortKey: [UInt8]) -> Bool {
        if IndexKey.less(sortKey, lower) { return false }
        if let upper, !IndexKey.less(sortKey, upper) { return false }
        return true
    }

    /// `spans` sorted and with overlaps joined: disjoint, in order (so a record is read once).
    package static func normalized(_ spans: [IndexBounds]) -> [IndexBounds] {
        let sorted = spans.filter { s in s.upper.map { IndexKey.less(s.lower, $0) } ?? true }
            .sorted { IndexKey.less($0.lower, $1.lower) }
        var out: [IndexBounds] = []
        for s in sorted {
            if let last = out.last, last.upper.map({ !IndexKey.less($0, s.lower) }) ?? true {
                // Overlaps (or touches) the one before: one span to the later end.
                if let u = last.upper, let su = s.upper { out[out.count - 1].upper = IndexKey.less(u, su) ? su : u } else {
                    out[out.count - 1].upper = nil
                }
            } else {
                out.append(s)
            }
        }
        return out
    }

    /// Exactly the value `v`: its key, up to the key right after it (the key with a 0x00
    /// appended; keys are prefix-free, so none lies between).
    static func exactly(_ v: JSON) -> IndexBounds {
        let k = IndexKey.encode(v)
        return IndexBounds(lower: k, upper: k + [0])
    }
}

extension QueryPredicate {
    /// Sort-key spans of an index on `field` that hold every record this predicate can pass
    /// (more, maybe, never fewer); nil when the predicate does not narrow `field` (the index
    /// does not fit it). The caller still checks the predicate on each record it reads.
    ///
    /// Fits: `eq`, `in`, `lt`/`le`/`gt`/`ge` and `prefix` on the field, alone or as an item of
    /// an `and`; an `or` whose every item fits.
    package func indexBounds(for field: FieldPath) -> [IndexBounds]? {
        switch self {
        case .compare(let path, let op, let operand):
            guard path == field else { return nil }
            switch op {
            case .eq: return [IndexBounds.exactly(operand)]
            case .ne: return nil
            case .lt, .le, .gt, .ge:
                // Only numbers with numbers, strings with strings, booleans with booleans.
                let kind: (first: UInt8, after: UInt8)
                switch operand {
                case .number: kind = (IndexKey.number, IndexKey.number + 1)
                case .string: kind = (IndexKey.string, IndexKey.string + 1)
                case .bool: kind = (IndexKey.falseByte, IndexKey.trueByte + 1)
                default: return []  // compares false with everything
                }
                let k = IndexKey.encode(operand)
                switch op {
                case .lt: return [IndexBounds(lower: [kind.first], upper: k)]
                case .le: return [IndexBounds(lower: [kind.first], upper: k + [0])]
                case .gt: return [IndexBounds(lower: k + [0], upper: [kind.after])]
                default: return [IndexBounds(lower: k, upper: [kind.after])]
                }
            }
        case .isIn(let path, let values):
            guard path == field else { return nil }
            return values.map(IndexBounds.exactly)
        case .prefix(let path, let prefix):
            guard path == field else { return nil }
            // Strings that start with `prefix`: its escaped bytes, then anything (a string's
            // bytes never hold 0xFF, so escaped bytes + 0xFF is past every one of them).
            var lower = IndexKey.encode(.string(prefix))
            lower.removeLast(2)  // the end mark
            return [IndexBounds(lower: lower, upper: lower + [0xFF])]
        case .and(let items):
            // Any item that fits bounds the whole: the one with the fewest spans.
            var best: [IndexBounds]?
            for item in items {
                if let b = item.indexBounds(for: field), best == nil || b.count < best!.count { best = b }
            }
            return best
        case .or(let items):
            var all: [IndexBounds] = []
            for item in items {
                guard let b = item.indexBounds(for: field) else { return nil }
                all.append(contentsOf: b)
            }
            return all
        case .exists, .not, .status:
            return nil
        }
    }
}
