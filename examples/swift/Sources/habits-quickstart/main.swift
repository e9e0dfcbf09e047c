#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Optimist

// Complete a habit: the change is visible at once, and pending until the server answers.
// With OPTIMIST_SERVER_URL set (e.g. http://127.0.0.1:8080, an optimist-server; see
// Server/README.md) the library's own sync sends it there; without it everything stays local.
let serverURL = getenv("OPTIMIST_SERVER_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

let store = try Store.open(path: nil)
try store.defineView("done-today", collection: "logs", prefix: "2026-11-22/", kind: .count)
if let serverURL {
    // A thread of the library pushes the outbox and pulls the server's changes, until
    // stopSync() or close().
    try store.startSync(SyncOptions(url: serverURL))
    print("syncing with", serverURL)
}
let id = try store.mutate([.put(collection: "logs", key: "2026-11-22/run", value: ["done": true])])
print("visible:", JSONWriter.string(try store.get("logs", "2026-11-22/run") ?? [:]), "pending:", try store.isPending("logs", "2026-11-22/run"))
print("done today:", try store.viewValue("done-today"))

var ok = true
if serverURL != nil {
    // Sent, answered and pulled after (at most 10 s).
    let idle = try store.waitForSyncIdle(timeoutMs: 10_000)
    let status = store.syncStatus
    print("sync:", status.state, "pushed:", status.pushed, "last error:", status.lastError ?? "none")
    let final = try store.status(id)
    print("status:", final, "pending:", try store.isPending("logs", "2026-11-22/run"))
    ok = idle && final == .committed
} else {
    print("no OPTIMIST_SERVER_URL: the change stays pending in the outbox (status: \(try store.status(id)))")
}
try store.close()
print(ok ? "habits-quickstart: done" : "habits-quickstart: the sync did not finish")
if !ok { exit(1) }
