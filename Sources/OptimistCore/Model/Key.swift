/// A collection name, record key or field name, compared byte by byte as UTF-8.
///
/// Swift's `String` equality folds canonically equivalent strings ("é" and "e\u{301}") together;
/// keys must not, and must sort bytewise so ISO dates and zero-padded numbers sort naturally.
public struct Key: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let string: String

    @inlinable public init(_ string: String) {
        var s = string
        s.makeContiguousUTF8()
        self.string = s
    }
    public init(stringLiteral value: String) { self.init(value) }
    public var description: String { string }

    @inlinable public static func == (a: Key, b: Key) -> Bool {
        a.string.utf8.withContiguousStorageIfAvailable { x in
            b.string.utf8.withContiguousStorageIfAvailable { y in
                x.count == y.count && (x.count == 0 || memoryEqual(x, y))
            }
        }.flatMap { $0 } ?? a.string.utf8.elementsEqual(b.string.utf8)
    }

    @inlinable public func hash(into hasher: inout Hasher) {
        if let done: Void = string.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        for b in string.utf8 { hasher.combine(b) }
    }

    @inlinable public static func < (a: Key, b: Key) -> Bool { compareBytes(a.string, b.string) < 0 }

    /// Whether this key's bytes start with `prefix`'s bytes.
    @inlinable public func hasBytePrefix(_ prefix: Key) -> Bool {
        let p = prefix.string.utf8, s = string.utf8
        if p.count > s.count { return false }
        return s.prefix(p.count).elementsEqual(p)
    }
}

@inlinable func memoryEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    while i < x.count { if x[i] != y[i] { return false }; i += 1 }
    return true
}

/// Bytewise three-way comparison of two strings' UTF-8.
@inlinable public func compareBytes(_ a: String, _ b: String) -> Int {
    let r: Int? = a.utf8.withContiguousStorageIfAvailable { x in
        b.utf8.withContiguousStorageIfAvailable { y in
            let n = min(x.count, y.count)
            var i = 0
            while i < n {
                if x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
                i += 1
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        }
    } ?? nil
    if let r { return r }
    var i = a.utf8.makeIterator(), j = b.utf8.makeIterator()
    while true {
        switch (i.next(), j.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (x?, y?): if x != y { return x < y ? -1 : 1 }
        }
    }
}
