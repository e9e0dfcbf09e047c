import Foundation
import Optimist

// A habit tracker's own record type: the store keeps it as JSON that every host reads.
struct HabitLog: Codable, Sendable {
    var habit: String
    var day: String
    var done: Bool
    var minutes: Int
    var at: Date
}

// With OPTIMIST_SERVER_URL set (e.g. http://127.0.0.1:8080, an optimist-server; see
// Server/README.md) the library's own sync sends the changes there; without it they stay local.
let serverURL = ProcessInfo.processInfo.environment["OPTIMIST_SERVER_URL"].flatMap { $0.isEmpty ? nil : $0 }

let store = try Store.open(path: nil)   // a path instead of nil: a SQLite store file
let logs = store.collection("logs", of: HabitLog.self)
let doneToday = try logs.countView("done-today", prefix: "2026-11-22/")
let minutesToday = try logs.sumView("minutes-today", of: \.minutes, prefix: "2026-11-22/")
let changes = try logs.changes(prefix: "2026-11-22/")   // from now on, decoded
// The screen's list: this month's completed habits, longest first, kept current (never reloaded).
let screen = try logs.query().keys(prefix: "2026-11-").filter(\.done, .eq, true)
    .sorted(by: \.minutes, descending: true).limit(20).live()
if let serverURL {
    try store.startSync(SyncOptions(url: serverURL))   // a thread of the library pushes and pulls
    print("syncing with", serverURL)
}

// Complete a habit: visible at once, pending until the server answers.
let run = HabitLog(habit: "run", day: "2026-11-22", done: true, minutes: 30, at: Date(timeIntervalSince1970: 1_795_332_600))
let id = try logs.put(run, at: "2026-11-22/run")
try logs.update("2026-11-22/run") { $0.minutes += 5 }   // sends {"minutes":35} alone
let log = try logs.get("2026-11-22/run")!
print("visible:", log.habit, log.minutes, "min, status:", try logs.status("2026-11-22/run"))
print("stored as:", JSONWriter.string(.object(try store.get("logs", "2026-11-22/run")!)))
print("done today:", try doneToday.value(), "minutes today:", try minutesToday.value())
print("screen:", screen.rows.map { "\($0.value.habit) \($0.value.minutes) min (\($0.status))" })
var seen = 0
for try await change in changes {   // the put and the update, as a UI would hear of them
    print("change:", change.key, change.value?.minutes ?? 0, change.status, change.cause)
    seen += 1
    if seen == 2 { break }
}

var ok = true
if serverURL != nil {
    // Sent, answered and pulled after (at most 10 s), awaited without blocking a thread of ours.
    let idle = try await store.waitForSyncIdle(timeout: .seconds(10))
    let status = store.syncStatus
    print("sync:", status.state, "pushed:", status.pushed, "last error:", status.lastError ?? "none")
    print("status:", try store.status(id), "record:", try logs.status("2026-11-22/run"))
    let final = try store.status(id)
    ok = idle && final == .committed
} else {
    print("no OPTIMIST_SERVER_URL: the change stays pending in the outbox (status: \(try store.status(id)))")
}
try await store.flushAsync()
try store.close()
print(ok ? "habits-quickstart: done" : "habits-quickstart: the sync did not finish")
if !ok { exit(1) }
