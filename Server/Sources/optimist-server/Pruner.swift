import Logging
import ServiceLifecycle

/// Removes tombstones and recorded outcomes older than the retention horizon
/// (`--retention-days`): at start, then periodically, in small transactions (one space
/// locked at a time, at most ``batch`` rows of each kind) so that pushes barely wait for it.
///
/// What pruning costs clients is documented in docs/protocol.md: a cursor older than a pruned
/// row is answered with a reset (it might have missed a delete), and a mutation re-sent after
/// its outcome was pruned is processed as new.
struct Pruner: Service {
    let storage: any Storage
    /// Rows written longer ago than this are pruned.
    let retentionMilliseconds: Int64
    let logger: Logger
    /// Finishes when the database is ready (PostgreSQL migrates after the services start).
    let ready: AsyncStream<Void>

    static let batch = 1000
    /// The most batches in one round: a round stays short; the next goes on.
    static let batchesPerRound = 100

    /// A round every half horizon, at least every hour: a row outlives the horizon by half of
    /// it at most (an hour for the default horizon), and an idle server's rounds cost two
    /// indexed lookups.
    var interval: Duration { .milliseconds(max(100, min(retentionMilliseconds / 2, 3_600_000))) }

    func run() async throws {
        for await _ in ready.cancelOnGracefulShutdown() {}
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await round()
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
        }
    }

    /// One round: batch after batch until nothing is older than the horizon, or the round's
    /// share is done.
    func round() async {
        var total = 0
        do {
            for _ in 0..<Self.batchesPerRound {
                let before = unixMilliseconds() - retentionMilliseconds
                let removed = try await storage.write { tx in
                    // The same locks as a push's: the pruned seq and the rows go together.
                    // Outcomes first: a round that has pruned a tombstone has pruned the
                    // outcomes as old as it.
                    if let user = try await tx.userWithPrunableOutcomes(before: before) {
                        _ = try await tx.lockSpace(.user(user))
                        return try await tx.pruneOutcomes(user: user, before: before, limit: Self.batch)
                    }
                    guard let space = try await tx.spaceWithPrunableTombstones(before: before) else { return 0 }
                    _ = try await tx.lockSpace(space)
                    return try await tx.pruneTombstones(space, before: before, limit: Self.batch)
                }
                if removed == 0 { break }
                total += removed
            }
        } catch {
            logger.warning("pruning failed (tried again next round): \(error)")
        }
        if total > 0 { logger.info("pruned \(total) tombstones and outcomes older than the retention horizon") }
    }
}
