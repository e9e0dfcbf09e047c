import OptimistCore

/// Journal entries folded into the net change one transaction writes (group commit): the last
/// write of a record or of a mutation within the batch wins, a mutation that ended within the
/// batch is written only as ended, loaded ranges keep their order.
///
/// Entries are folded in the order the store produced them, so a batch always holds the
/// state after some store call: a crash loses whole calls, never part of one.
struct JournalBatch {
    struct RecordKey: Hashable {
        var collection: Key
        var key: Key
    }

    /// `nil` value: the confirmed record was deleted.
    var records: [RecordKey: Record?] = [:]
    var mutations: [MutationID: MutationRecord] = [:]
    /// Ended mutations in the order they ended (a mutation ends once). Taps end ids in
    /// increasing order, so ``endedInOrder`` usually stays true and the writer groups them by
    /// chunk without sorting.
    private(set) var ended: [(id: MutationID, status: MutationStatus)] = []
    private(set) var endedInOrder = true
    var loaded: [(collection: Key, range: LoadedRange)] = []
    /// The last sync cursor recorded in the batch, when one was (`.some(nil)`: cleared).
    var syncCursor: String??
    /// Views by name, the last definition and confirmed value in the batch.
    var views: [String: ViewDefinition] = [:]
    /// The highest mutation id seen, so the file's next id never falls behind an id handed out.
    var maxID: MutationID = 0

    var isEmpty: Bool {
        records.isEmpty && mutations.isEmpty && ended.isEmpty && loaded.isEmpty && maxID == 0 && syncCursor == nil && views.isEmpty
    }

    mutating func fold(_ entries: [JournalEntry]) {
        for e in entries {
            switch e {
            case .confirmed(let c, let k, let v):
                records[RecordKey(collection: c, key: k)] = .some(v)
            case .mutation(let m):
                mutations[m.id] = m
                maxID = max(maxID, m.id)
            case .ended(let id, let status):
                mutations.removeValue(forKey: id)
                if let last = ended.last, id <= last.id { endedInOrder = false }
                ended.append((id, status))
                maxID = max(maxID, id)
            case .loaded(let c, let from, let to, let at):
                loaded.append((c, LoadedRange(from: from, to: to, at: at)))
            case .syncCursor(let cursor):
                syncCursor = .some(cursor)
            case .view(let v):
                views[v.name] = v
            }
        }
    }
}
