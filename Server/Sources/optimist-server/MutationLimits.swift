import OptimistModel

/// The shared ``Limits`` applied to one pushed mutation. A mutation over one is that mutation's
/// `rejected` result (the rest of the push goes on), never a refusal of the whole request: no
/// mutation can stop the ones queued behind it.
enum MutationLimits {
    /// Why the mutation is over a limit, nil when it is within all of them. `encodedBytes`:
    /// the size of its ops as canonical JSON text (``Op/encode(_:)``).
    static func violation(of ops: [Op], encodedBytes: Int) -> String? {
        if ops.count > Limits.maxOpsPerMutation {
            return "\(ops.count) ops: over the limit of \(Limits.maxOpsPerMutation) ops in one mutation"
        }
        for op in ops {
            let collBytes = op.collection.string.utf8.count, keyBytes = op.key.string.utf8.count
            if collBytes > Limits.maxNameBytes {
                return "collection name \(shown(op.collection)) is \(collBytes) bytes: over the limit of \(Limits.maxNameBytes)"
            }
            if keyBytes > Limits.maxNameBytes {
                return "key \(shown(op.key)) in \(shown(op.collection)) is \(keyBytes) bytes: over the limit of \(Limits.maxNameBytes)"
            }
            switch op {
            case .put(_, _, let value), .patch(_, _, let value):
                if depth(of: value, limit: Limits.maxDepth) > Limits.maxDepth {
                    return "record \(shown(op.collection))/\(shown(op.key)) nests more than \(Limits.maxDepth) levels deep "
                        + "(the record being level 1): over the limit"
                }
            case .delete, .incr: break
            }
        }
        if encodedBytes > Limits.maxMutationBytes {
            return "the mutation's ops are \(encodedBytes) bytes as JSON text: over the limit of \(Limits.maxMutationBytes) bytes"
        }
        return nil
    }

    /// The nesting depth of a record (itself level 1), counted no further than `limit + 1`.
    static func depth(of record: Record, limit: Int) -> Int {
        var deepest = 1
        for value in record.values {
            deepest = max(deepest, 1 + depth(of: value, limit: limit - 1))
            if deepest > limit { break }
        }
        return deepest
    }

    /// A value's depth below its container: 0 for a scalar, 1 + its members' for an array or
    /// object. The parser already bounds nesting (``JSONParser/maxDepth``), so the recursion
    /// is shallow; `limit` only stops it early.
    private static func depth(of value: JSON, limit: Int) -> Int {
        switch value {
        case .object(let o): return depth(of: o, limit: limit)
        case .array(let items):
            var deepest = 1
            for item in items {
                deepest = max(deepest, 1 + depth(of: item, limit: limit - 1))
                if deepest > limit { break }
            }
            return deepest
        default: return 0
        }
    }

    /// A name in an error message: quoted, long ones cut short.
    private static func shown(_ name: Key) -> String {
        let s = name.string
        return s.utf8.count <= 40 ? "\"\(s)\"" : "\"\(s.prefix(32))…\""
    }
}
