import Optimist

// Complete a habit: the change is visible at once, and pending until the server answers.
let store = try Store.open(path: nil)
try store.defineView("done-today", collection: "logs", prefix: "2026-11-22/", kind: .count)
let id = try store.mutate([.put(collection: "logs", key: "2026-11-22/run", value: ["done": true])])
print("visible:", JSONWriter.string(try store.get("logs", "2026-11-22/run") ?? [:]), "pending:", try store.isPending("logs", "2026-11-22/run"))
print("done today:", try store.viewValue("done-today"))

// The sender hands it to the server; the server accepts it.
if let next = try store.outboxNext(now: 0) {
    print("sending mutation \(next.id) of client \(store.clientID): \(Op.encode(next.ops))")
    try store.commit(next.id)
}
print("status:", try store.status(id), "pending:", try store.isPending("logs", "2026-11-22/run"))
try store.close()
print("habits-quickstart: done")
