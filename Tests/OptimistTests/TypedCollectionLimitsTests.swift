import Testing
import Optimist

/// A tree of the app's own type, as deep as it is built.
struct Node: Codable, Sendable, Equatable {
    var children: [Node]

    static func depth(_ levels: Int) -> Node {
        var n = Node(children: [])
        for _ in 1..<levels { n = Node(children: [n]) }
        return n
    }
}

/// The limits on one mutation hold through the typed API too: at each accepted, one over
/// refused as `.store(.invalid)` naming the limit, nothing changed.
@Suite struct TypedCollectionLimitsTests {
    let store = Store()
    var trees: TypedCollection<Node> { store.collection("trees", of: Node.self) }

    func refused(_ body: () throws(CollectionError) -> Void, naming figure: String) throws {
        let pending = try store.pendingCount()
        do {
            try body()
            Issue.record("accepted a value over a limit (expected one naming \(figure))")
        } catch {
            guard case .store(.invalid(let m)) = error else { Issue.record("not invalid: \(error)"); return }
            #expect(m.contains(figure), "\(m)")
        }
        #expect(try store.pendingCount() == pending)
    }

    @Test func aKeyOverTheLimitIsRefused() throws {
        let at = Key(String(repeating: "k", count: Limits.maxNameBytes))
        let over = Key(at.string + "k")
        try trees.put(Node(children: []), at: at)
        try refused({ () throws(CollectionError) in try trees.put(Node(children: []), at: over) }, naming: "1024")
        #expect(try trees.get(over) == nil)
    }

    @Test func aValueNestedOverTheLimitIsRefused() throws {
        // Node.depth(n) nests 2n levels: the record 1, its array 2, the node in it 3, ...
        let at = Node.depth(32)
        try trees.put(at, at: "at")
        #expect(try trees.get("at") == at)
        try refused({ () throws(CollectionError) in try trees.put(Node.depth(33), at: "over") }, naming: "64")
        #expect(try trees.get("over") == nil)
    }
}
