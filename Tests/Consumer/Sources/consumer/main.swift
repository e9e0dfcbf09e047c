// What an app does first with the package: a store, a mutation, its end awaited.
import Optimist

@main struct Consumer {
    static func main() async throws {
        let store = try Store.open(path: nil, localOnly: true)
        let id = try store.mutate([.incr(collection: "habits", key: "run", field: "count", delta: 1)])
        let status = try await store.settled(id)
        guard status == .committed, try store.confirmed("habits", "run") == ["count": 1] else {
            print("consumer: unexpected status \(status)")
            throw OptimistError.state("the mutation did not commit")
        }
        let remote = Store()
        let sent = try remote.mutate([.put(collection: "todos", key: "tmp-1", value: ["title": "Milk"])])
        try remote.commit(sent, renames: [KeyRename(collection: "todos", from: "tmp-1", to: "812")])
        guard try remote.get("todos", "812") == ["title": "Milk"] else { throw OptimistError.state("the rename did not land") }
        try store.close()
        try remote.close()
        print("consumer: ok (\(status))")
    }
}
