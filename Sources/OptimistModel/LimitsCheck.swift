extension Limits {
    /// Refuses `ops` over any limit with `.invalid`, naming the limit and the figure found:
    /// more ops than ``maxOpsPerMutation``, a collection or key longer than ``maxNameBytes``,
    /// a put's or patch's value nested deeper than ``maxDepth``, or ops whose text
    /// (`Op.encode(ops)`) is longer than ``maxMutationBytes``.
    ///
    /// One walk over the values measures their depth and an upper bound of their text; only a
    /// bound over the limit has the text measured exactly (by writing it), so a mutation far
    /// below the limit is never written out here.
    public static func check(_ ops: [Op]) throws(OptimistError) {
        guard ops.count <= maxOpsPerMutation else { throw tooManyOps(ops.count) }
        var bound = 2  // "[" and "]"
        for (n, op) in ops.enumerated() {
            let c = op.collection.string.utf8.count, k = op.key.string.utf8.count
            if c > maxNameBytes { throw nameTooLong("collection", c, op: n) }
            if k > maxNameBytes { throw nameTooLong("key", k, op: n) }
            bound &+= Tally.opBytes(collection: c, key: k)
            switch op {
            case .put(_, _, let v), .patch(_, _, let v):
                var deepest = 1
                bound &+= measure(v, level: 1, deepest: &deepest)
                if deepest > maxDepth { throw tooDeep(deepest, op: n) }
            case .incr(_, _, let f, _):
                bound &+= Tally.incrBytes(field: f.string.utf8.count)
            case .delete:
                break
            }
        }
        if bound > maxMutationBytes {
            let exact = Op.encodedBytes(ops).count
            if exact > maxMutationBytes { throw tooLarge(exact) }
        }
    }

    /// An upper bound of the canonical text of `record` (at nesting level `level`), and the
    /// deepest level inside it. A string's text is at most 6 bytes per UTF-8 byte (a control
    /// character is written `\u00XX`), plus its quotes; a number's at most 24 bytes.
    private static func measure(_ record: Record, level: Int, deepest: inout Int) -> Int {
        var bytes = 2
        for (name, value) in record {
            bytes &+= 6 &* name.string.utf8.count &+ 4 &+ measure(value, level: level, deepest: &deepest)
        }
        return bytes
    }

    private static func measure(_ value: JSON, level: Int, deepest: inout Int) -> Int {
        switch value {
        case .null, .bool: return 5
        case .number: return Tally.numberBytes
        case .string(let s): return 6 &* s.utf8.count &+ 2
        case .array(let items):
            if level + 1 > deepest { deepest = level + 1 }
            if deepest > maxDepth { return 0 }  // refused already: no need to go further down
            var bytes = 2
            for item in items { bytes &+= measure(item, level: level + 1, deepest: &deepest) &+ 1 }
            return bytes
        case .object(let o):
            if level + 1 > deepest { deepest = level + 1 }
            if deepest > maxDepth { return 0 }
            return measure(o, level: level + 1, deepest: &deepest)
        }
    }

    // The errors, built out of line (their interpolation is code every mutate would carry).

    @inline(never) package static func tooManyOps(_ n: Int) -> OptimistError {
        .invalid("the mutation has \(n) ops, over the limit of \(maxOpsPerMutation) ops in one mutation")
    }

    @inline(never) package static func nameTooLong(_ what: String, _ bytes: Int, op: Int) -> OptimistError {
        .invalid("op \(op): the \(what) has \(bytes) bytes (UTF-8), over the limit of \(maxNameBytes) bytes for a collection or key")
    }

    @inline(never) package static func tooDeep(_ depth: Int, op: Int) -> OptimistError {
        .invalid("op \(op): the value nests \(depth) levels deep (the record is level 1), over the limit of \(maxDepth) levels")
    }

    @inline(never) package static func tooLarge(_ bytes: Int) -> OptimistError {
        .invalid("the mutation's ops take \(bytes) bytes as JSON text, over the limit of \(maxMutationBytes) bytes for one mutation")
    }
}

extension Limits {
    /// What a mutation's maker learns about its ops while it builds them (the sizes of names
    /// and texts it already has, the nesting the JSON parser already tracks), enough to tell
    /// cheaply that they are within every limit. When ``isWithin`` cannot tell,
    /// ``Limits/check(_:)`` decides exactly. The C entry points keep one per batch and per
    /// one-op put, so a tap measures nothing twice and never walks its record.
    package struct Tally: Sendable {
        package private(set) var ops = 0
        package private(set) var longestName = 0
        package private(set) var deepest = 1
        /// An upper bound of `Op.encode(ops)`'s byte count.
        package private(set) var bytes = 2

        package init() {}

        /// The most bytes a number takes as text (`-2.2250738585072014e-308`).
        package static let numberBytes = 24

        /// An upper bound of an op's text without its value (a put or patch) or its field and
        /// delta (an incr): its members' names, quotes and separators, and its two names at
        /// 6 bytes per byte.
        @inline(__always) package static func opBytes(collection: Int, key: Int) -> Int {
            64 &+ 6 &* (collection &+ key)
        }

        /// An upper bound of an incr's field and delta members.
        @inline(__always) package static func incrBytes(field: Int) -> Int {
            24 &+ 6 &* field &+ numberBytes
        }

        /// An upper bound of the canonical text of a record parsed from `length` bytes of
        /// JSON text: a number's text grows at most from 4 bytes (`1e15`) to 16, so 6 bytes
        /// per byte holds for any text, strings included.
        @inline(__always) package static func jsonBytes(length: Int) -> Int { 6 &* length }

        /// Counts one op: its collection's and key's byte counts, its value's depth (1 for a
        /// flat record; 0 for none) and an upper bound of its value's text (or of an incr's
        /// field and delta).
        @inline(__always) package mutating func add(collection: Int, key: Int, depth: Int, valueBytes: Int) {
            ops &+= 1
            if collection > longestName { longestName = collection }
            if key > longestName { longestName = key }
            if depth > deepest { deepest = depth }
            bytes &+= Self.opBytes(collection: collection, key: key) &+ valueBytes
        }

        /// Whether the ops counted are surely within every limit (`false`: maybe not, so
        /// ``Limits/check(_:)`` must decide).
        @inline(__always) package var isWithin: Bool {
            ops <= maxOpsPerMutation && longestName <= maxNameBytes && deepest <= maxDepth && bytes <= maxMutationBytes
        }
    }
}
