import Foundation
import Optimist

// Runs the habit tracker's view model (HabitsViewModel.swift) as a screen would: taps, the
// list redrawn from the live query, a double tap refused, and a change undone with its reason.

@MainActor func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
    for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    guard condition() else { throw OptimistError.state("timed out waiting until \(what)") }
}

@MainActor func run() async throws -> Bool {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("habits-viewmodel-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }

    // 1. No server: a local-only store file. Each tap is saved (committed once on disk).
    let store = try Store.open(path: dir.appendingPathComponent("habits.optimist").path, localOnly: true)
    let model = try HabitsViewModel(store: store, day: "2026-11-27")
    try model.tap("run")
    try await waitUntil("the screen shows the tap") { model.count("run") == 1 }
    print("screen:", model.rows.map { "\($0.value.habit) x\($0.value.count) (\($0.status))" })
    try await store.flushAsync()                       // saved: the row turns confirmed
    try await waitUntil("the row is confirmed") { model.rows.first?.status == .confirmed }
    try model.tap("run")
    try model.tap("read")
    try await store.flushAsync()
    try await waitUntil("both rows are saved") { model.count("run") == 2 && model.count("read") == 1 && model.rows.allSatisfy { $0.status == .confirmed } }
    print("screen:", model.rows.map { "\($0.value.habit) x\($0.value.count) (\($0.status))" })
    model.stop()
    try store.close()

    // 2. The same screen model over a store whose changes a backend judges (here: one that
    //    refuses naps). A double tap is refused while the first is pending; the refused tap
    //    is rolled back, and the banner says why.
    let synced = Store()
    let second = try HabitsViewModel(store: synced, day: "2026-11-27")
    let backend = Task {
        for try await m in synced.dueMutations() {
            if m.ops.contains(where: { $0.key.description.hasSuffix("/nap") }) {
                try synced.rollback(m.id, reason: "naps are not habits")
            } else {
                try synced.commit(m.id)
            }
        }
    }
    let first = try second.tap("nap")
    let double = try second.tap("nap")                 // before the backend answered: refused
    print("first tap:", first, "double tap:", double)
    try await waitUntil("the banner shows") { second.banner != nil }
    try await waitUntil("the nap row is gone") { second.count("nap") == 0 }
    print("banner:", second.banner ?? "")
    backend.cancel()
    second.stop()
    try synced.close()
    return first && second.banner == "Not saved: naps are not habits"
}

let ok = try await run()
print(ok ? "habits-viewmodel: done" : "habits-viewmodel: unexpected")
if !ok { exit(1) }
