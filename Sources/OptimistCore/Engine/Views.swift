import OptimistModel
/// What a view aggregates.
public enum ViewKind: Sendable, Equatable {
    /// The number of visible records.
    case count
    /// The sum of a numeric top-level field (records without it, or with a non-number, add 0).
    case sum(field: Key)

    /// `"count"` or `"sum:<field>"`: what ``init(parsing:)`` reads.
    public var text: String {
        switch self {
        case .count: "count"
        case .sum(let field): "sum:" + field.string
        }
    }

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

/// A view as a store file keeps it: its definition and its value over the confirmed records.
///
/// The value over the visible records is not kept: on open it is the confirmed value plus
/// what the pending overlay changes (O(pending)), so nothing is recomputed from the records.
public struct ViewDefinition: Sendable, Equatable {
    public var name: String
    public var collection: Key
    public var prefix: Key
    public var kind: ViewKind
    /// The aggregate over the confirmed records of `collection` under `prefix`.
    public var confirmedValue: Double

    public init(name: String, collection: Key, prefix: Key, kind: ViewKind, confirmedValue: Double) {
        self.name = name
        self.collection = collection
        self.prefix = prefix
        self.kind = kind
        self.confirmedValue = confirmedValue
    }
}

/// An aggregate kept up to date on every change of its collection: over the visible records
/// (what reads return) and over the confirmed ones (what a store file keeps).
final class ViewState {
    let name: String
    /// ``name`` as the engine's ``Engine/views`` is keyed, made once (a call that confirms
    /// records checks each changed view against that table).
    let key: Key
    let collection: Key
    let prefix: Key
    let kind: ViewKind
    @exclusivity(unchecked) var value: Double = 0
    @exclusivity(unchecked) var confirmedValue: Double = 0
    /// Listed in the engine's ``Engine/changedViews`` for the call in progress.
    @exclusivity(unchecked) var changed = false
    /// Replaced by a view defined again under its name: no longer the engine's, so a change
    /// of its value is not journaled (a flag, where a lookup of the name cost every
    /// confirming call a hash and a probe).
    @exclusivity(unchecked) var retired = false
    /// ``value`` as of the last finished call, for readers without the state lock.
    let published = PublishedValue(0)

    init(name: String, collection: Key, prefix: Key, kind: ViewKind) {
        self.name = name
        key = Key(name)
        self.collection = collection
        self.prefix = prefix
        self.kind = kind
    }

    var definition: ViewDefinition {
        ViewDefinition(name: name, collection: collection, prefix: prefix, kind: kind, confirmedValue: confirmedValue)
    }

    @inline(__always) func contribution(_ record: Record?) -> Double { kind.contribution(record) }

    func update(key: Key, old: Record?, new: Record?) {
        guard key.hasBytePrefix(prefix) else { return }
        let delta = contribution(new) - contribution(old)
        if delta != 0 { value += delta }
    }

    /// Follows a confirmed record's change; true when the confirmed value changed.
    func updateConfirmed(key: Key, old: Record?, new: Record?) -> Bool {
        guard key.hasBytePrefix(prefix) else { return false }
        let delta = contribution(new) - contribution(old)
        if delta != 0 { confirmedValue += delta }
        return delta != 0
    }
}
