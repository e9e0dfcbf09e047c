import OptimistThreads
import Synchronization

/// The store's blocking waits, for async code: each runs on a thread of the library's own, so
/// the caller's actor (the main actor of a UI) and the cooperative thread pool stay free while
/// the disk or the server is waited for.
extension Store {
    /// Returns once everything that happened before the call is durable, like
    /// ``/OptimistCore/Store/flush()``, without blocking the calling thread.
    public func flushAsync() async throws(OptimistError) {
        try await onOwnThread { () throws(OptimistError) in try self.flush() }
    }

    /// Waits until the sync has nothing pending or inflight (failed mutations excepted) and a pull
    /// has completed after the last push, like
    /// ``/OptimistSync/OptimistCore/Store/waitForSyncIdle(timeoutMs:)``, without blocking the
    /// calling thread. False when `timeout` passes first, or when the task is cancelled (noticed
    /// within 50 ms).
    ///
    /// - Throws: `.misuse` when no sync runs.
    public func waitForSyncIdle(timeout: Duration) async throws(OptimistError) -> Bool {
        let total = timeout.optimistMilliseconds
        let cancelled = Atomic<Bool>(false)
        return try await withTaskCancellationHandler {
            await onOwnThreadResult { () throws(OptimistError) -> Bool in
                // In slices, so a cancelled task's thread stops waiting soon after.
                let (sum, overflow) = monotonicMilliseconds().addingReportingOverflow(total)
                let deadline = overflow ? Int64.max : sum
                while true {
                    let left = deadline - monotonicMilliseconds()
                    if try self.waitForSyncIdle(timeoutMs: max(0, min(left, 50))) { return true }
                    if left <= 50 || cancelled.load(ordering: .relaxed) { return false }
                }
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }.get()
    }
}

/// Runs `body` on a new thread and resumes the caller with what it returned or threw.
func onOwnThread<R: Sendable>(_ body: @escaping @Sendable () throws(OptimistError) -> R) async throws(OptimistError) -> R {
    try await onOwnThreadResult(body).get()
}

func onOwnThreadResult<R: Sendable>(_ body: @escaping @Sendable () throws(OptimistError) -> R) async -> Result<R, OptimistError> {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result<R, OptimistError>, Never>) in
        let started = startDetachedThread {
            continuation.resume(returning: Result { () throws(OptimistError) -> R in try body() })
        }
        if !started { continuation.resume(returning: .failure(.internal("could not start a thread to wait on"))) }
    }
}
