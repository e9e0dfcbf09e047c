import Foundation
import Synchronization
import Testing
import Optimist

/// flushAsync and waitForSyncIdle(timeout:) wait on a thread of their own: the caller's actor
/// keeps running meanwhile.
@Suite struct StoreAsyncTests {
    /// A server that accepts every mutation, and holds its answers while `hold` is set.
    final class AcceptingServer: SyncTransport {
        let hold = Atomic<Bool>(false)
        let pushes = Atomic<Int>(0)

        func send(_ request: SyncRequest, cancelled: @Sendable () -> Bool) -> SyncReply {
            while hold.load(ordering: .acquiring) && !cancelled() { usleep(1_000) }
            guard request.endpoint == .push else {
                return .http(status: 200, body: #"{"cursor":"1","more":false,"changes":[],"outcomes":[]}"#, retryAfterMs: nil)
            }
            pushes.add(1, ordering: .relaxed)
            guard case .object(let body)? = try? JSONParser.parse(request.body), case .array(let ms)? = body["mutations"] else {
                return .http(status: 400, body: "{}", retryAfterMs: nil)
            }
            let results: [JSON] = ms.compactMap { m in m.object?["id"].map { ["id": $0, "status": "ok"] } }
            return .http(status: 200, body: JSONWriter.string(["results": .array(results)]), retryAfterMs: nil)
        }
    }

    @MainActor final class Ticker { var ticks = 0 }

    @Test @MainActor func waitingForSyncIdleLeavesTheMainActorFree() async throws {
        let store = Store()
        let server = AcceptingServer()
        server.hold.store(true, ordering: .releasing)
        try store.startSync(SyncOptions(transport: server, pullIntervalMs: 0))
        let logs = store.collection("logs", of: HabitLog.self)
        let id = try logs.put(.on("d", "run", minutes: 5), at: "d/run")
        let ticker = Ticker()
        let waiting = Task { @MainActor in try await store.waitForSyncIdle(timeout: .seconds(20)) }
        // The main actor runs while the wait is on: these ticks happen, then the server answers.
        for _ in 0..<5 {
            ticker.ticks += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(ticker.ticks == 5)
        server.hold.store(false, ordering: .releasing)
        #expect(try await waiting.value)
        #expect(try store.status(id) == .committed && logs.status("d/run") == .confirmed)
        try store.close()
    }

    @Test func aCancelledWaitReturnsFalseSoon() async throws {
        let store = Store()
        let server = AcceptingServer()
        server.hold.store(true, ordering: .releasing)
        try store.startSync(SyncOptions(transport: server, pullIntervalMs: 0))
        try store.mutate([.put(collection: "logs", key: "k", value: ["done": true])])
        // The sync never goes idle (the server holds every push), so only the cancellation can
        // end this wait before its timeout. The bound below tells the two endings apart: it is
        // half the timeout, not a speed claim (a loaded machine once took 7 s to wind down).
        let waiting = Task { try await store.waitForSyncIdle(timeout: .seconds(120)) }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        waiting.cancel()
        #expect(try await waiting.value == false)
        #expect(ContinuousClock.now - start < .seconds(60))
        server.hold.store(false, ordering: .releasing)
        try store.close()
    }

    @Test func waitingWithoutASyncIsMisuse() async {
        await #expect(throws: OptimistError.self) { try await Store().waitForSyncIdle(timeout: .seconds(1)) }
    }

    @Test func flushAsyncMakesAFileStoreDurableAndReportsAClosedStore() async throws {
        let path = "/tmp/optimist-async-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).optimist"
        defer { unlink(path); unlink(path + "-wal"); unlink(path + "-shm") }
        let store = try Store.open(path: path)
        let logs = store.collection("logs", of: HabitLog.self)
        try logs.put(.on("d", "run", minutes: 7), at: "d/run")
        try await store.flushAsync()
        try store.close()
        let reopened = try Store.open(path: path)
        #expect(try reopened.collection("logs", of: HabitLog.self).get("d/run")?.minutes == 7)
        try reopened.close()
        await #expect(throws: OptimistError.misuse("the store is closed")) { try await reopened.flushAsync() }
    }
}
