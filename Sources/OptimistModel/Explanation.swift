/// Why a record looks the way it does: its confirmed value, each not-yet-ended mutation on it
/// (a *layer*) with the value after it, and the visible value every read returns.
///
/// The layers are the record's pending chain, oldest first (id order), folded on the
/// confirmed value as the store folds them (`V = fold(P, C)`): an op that cannot apply on the
/// value below it (an `incr` of a field that has become a non-number) is skipped, and its
/// mutation stays a layer.
public struct Explanation: Sendable, Equatable {
    /// One not-yet-ended mutation's effect on the record.
    public struct Layer: Sendable, Equatable {
        public var id: MutationID
        public var status: MutationStatus
        /// The mutation's ops on this record, in order (its ops on other records are left out).
        public var ops: [Op]
        /// Positions in ``ops`` of the ops that could not apply and were skipped.
        public var skipped: [Int]
        /// The record after this layer; nil when it is deleted (or still absent).
        public var value: Record?

        public init(id: MutationID, status: MutationStatus, ops: [Op], skipped: [Int] = [], value: Record?) {
            self.id = id
            self.status = status
            self.ops = ops
            self.skipped = skipped
            self.value = value
        }
    }

    public var collection: Key
    public var key: Key
    /// What the authority acknowledged; nil when it holds no such record.
    public var confirmed: Record?
    public var layers: [Layer]
    /// What reads return: the last layer's value, or the confirmed one when there is none.
    public var visible: Record?

    public init(collection: Key, key: Key, confirmed: Record?, layers: [Layer], visible: Record?) {
        self.collection = collection
        self.key = key
        self.confirmed = confirmed
        self.layers = layers
        self.visible = visible
    }

    /// Folds `mutations` (not-yet-ended, in id order; those that do not touch the record are
    /// passed over) on `confirmed`, as the store computes the visible value: the same rule
    /// whether the mutations come from a live store or from a store file read by a tool.
    public static func fold(collection: Key, key: Key, confirmed: Record?,
                            mutations: some Sequence<MutationRecord>) -> Explanation {
        var value = confirmed
        var layers = [Layer]()
        for m in mutations {
            var ops = [Op](), skipped = [Int]()
            for op in m.ops where op.key == key && op.collection == collection {
                switch op.apply(to: value) {
                case .success(let next): value = next
                case .failure: skipped.append(ops.count)
                }
                ops.append(op)
            }
            if !ops.isEmpty { layers.append(Layer(id: m.id, status: m.status, ops: ops, skipped: skipped, value: value)) }
        }
        return Explanation(collection: collection, key: key, confirmed: confirmed, layers: layers, visible: value)
    }
}

extension Explanation {
    /// The form every host sees (C `optimist_explain`, Python `explain`, `optimist explain
    /// --json`): `{"confirmed": obj|null, "layers": [{"id", "ops", "status", "value"}],
    /// "visible": obj|null}`, ops in wire form (``Op/json``).
    public var json: JSON {
        .object([
            "confirmed": confirmed.map(JSON.object) ?? .null,
            "layers": .array(layers.map { l in
                .object([
                    "id": .number(Double(l.id)),
                    "status": .string(l.status.description),
                    "ops": .array(l.ops.map(\.json)),
                    "value": l.value.map(JSON.object) ?? .null,
                ])
            }),
            "visible": visible.map(JSON.object) ?? .null,
        ])
    }
}

extension FailurePolicy: CustomStringConvertible {
    /// The name every host uses: `rollback` or `keep`.
    public var description: String {
        switch self {
        case .rollback: "rollback"
        case .keep: "keep"
        }
    }
}

extension MutationRecord {
    /// The form every host sees (C `optimist_mutations`, Python `mutations`, `optimist outbox
    /// --json`): `{"attempts", "created_ms", "dedupe_key", "id", "last_error",
    /// "next_attempt_ms", "ops", "policy", "retry", "status"}`.
    ///
    /// `created_ms` is always null: the library never reads a clock, and the store file keeps
    /// no creation time. `next_attempt_ms` is the time (the caller's clock) before which the
    /// mutation is not handed out: 0 for a new one, and for one made due by `retry`, which is
    /// due whatever the clock says; numbers stay within ±(2^53 − 1), exact in every host.
    public var json: JSON {
        .object([
            "id": .number(Double(id)),
            "status": .string(status.description),
            "ops": .array(ops.map(\.json)),
            "attempts": .number(Double(attempts)),
            "last_error": lastError.map(JSON.string) ?? .null,
            "next_attempt_ms": .number(Double(MutationRecord.exactInJSON(nextAttemptAt))),
            "created_ms": .null,
            "policy": .string(policy.description),
            "dedupe_key": dedupeKey.map(JSON.string) ?? .null,
            "retry": .number(Double(retry)),
        ])
    }

    /// `Int64.min` (due at once, set by a retry) reads as 0; anything else is clamped to what
    /// a double holds exactly.
    static func exactInJSON(_ ms: Int64) -> Int64 {
        let limit: Int64 = (1 << 53) - 1
        if ms == Int64.min { return 0 }
        return min(max(ms, -limit), limit)
    }
}
