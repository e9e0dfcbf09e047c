import Logging
import PostgresNIO
import ServiceLifecycle

/// Hears, on one connection of its own, what every server process on the PostgreSQL database
/// pushed (the NOTIFYs of ``StoreTransaction/announce(_:)``), and hands it to the ``PokeHub``:
/// a client connected to any process is poked by a push to any other.
///
/// A lost connection is listened again a second later; when listening starts (again), every
/// stream is poked, since changes may have gone unheard meanwhile.
struct ChangeListener: Service {
    let client: PostgresClient
    let hub: PokeHub
    let logger: Logger
    /// Finishes when the schema is ready.
    let ready: AsyncStream<Void>

    func run() async throws {
        for await _ in ready.cancelOnGracefulShutdown() {}
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await client.withConnection { conn in
                        try await conn.listen(on: PostgresStorage.changesChannel) { notifications in
                            hub.pokeAll()
                            for try await n in notifications {
                                guard let changes = SpaceChanges(payload: n.payload) else {
                                    logger.warning("ignored a notification on \(PostgresStorage.changesChannel) not of this server")
                                    continue
                                }
                                hub.changed(changes)
                            }
                        }
                    }
                }
            } catch {
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                logger.warning("listening for changes failed (streams get no pokes meanwhile; clients poll): \(error)")
            }
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) } } catch { break }
        }
    }
}
