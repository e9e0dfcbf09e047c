import OptimistModel
/// The live mutations touching one key, oldest first.
///
/// Most keys have at most one, so the first id is kept inline: a mutate on a quiet key
/// allocates no array for its chain.
struct PendingChain: Sequence {
    /// 0 when empty (mutation ids start at 1).
    private var first: MutationID = 0
    private var rest: [MutationID] = []

    var isEmpty: Bool { first == 0 }
    var count: Int { first == 0 ? 0 : 1 + rest.count }

    /// The id at `position` (0: the oldest).
    subscript(position: Int) -> MutationID { position == 0 ? first : rest[position - 1] }

    mutating func append(_ id: MutationID) {
        if first == 0 { first = id } else { rest.append(id) }
    }

    /// Removes `id`; afterwards the chain may be empty.
    mutating func remove(_ id: MutationID) {
        if first == id {
            first = rest.isEmpty ? 0 : rest.removeFirst()
        } else if let i = rest.firstIndex(of: id) {
            rest.remove(at: i)
        }
    }

    struct Iterator: IteratorProtocol {
        let chain: PendingChain
        var position = -1
        mutating func next() -> MutationID? {
            defer { position += 1 }
            if position == -1 { return chain.first == 0 ? nil : chain.first }
            return position < chain.rest.count ? chain.rest[position] : nil
        }
    }

    func makeIterator() -> Iterator { Iterator(chain: self) }
}
