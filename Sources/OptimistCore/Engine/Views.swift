/// What a view aggregates.
public enum ViewKind: Sendable, Equatable {
    /// The number of visible records.
    case count
    /// The sum of a numeric top-level field (records without it, or with a non-number, add 0).
    case sum(field: Key)

    /// Parses `"count"` or `"sum:<field>"`.
    public init(parsing text: String) throws(OptimistError) {
        if text == "count" { self = .count; return }
        if text.utf8.starts(with: "sum:".utf8) {
            let field = String(text.dropFirst(4))
            guard !field.isEmpty else { throw .misuse("view kind sum: needs a field name") }
            self = .sum(field: Key(field))
            return
        }
        throw .misuse("unknown view kind \"\(text)\" (expected \"count\" or \"sum:<field>\")")
    }
}

/// An aggregate kept up to date on every visible change of its collection.
final class ViewState {
    let name: String
    let collection: Key
    let prefix: Key
    let kind: ViewKind
    var value: Double = 0

    init(name: String, collection: Key, prefix: Key, kind: ViewKind) {
        self.name = name
        self.collection = collection
        self.prefix = prefix
        self.kind = kind
    }

    func contribution(_ record: Record?) -> Double {
        guard let record else { return 0 }
        switch kind {
        case .count: return 1
        case .sum(let field): return record[field]?.number ?? 0
        }
    }

    func update(key: Key, old: Record?, new: Record?) {
        guard key.hasBytePrefix(prefix) else { return }
        let delta = contribution(new) - contribution(old)
        if delta != 0 { value += delta }
    }
}
