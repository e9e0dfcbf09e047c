import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel with a ConnectionGuard in front of it (read and idle
/// deadlines, the connection cap) and RequestPhases after its decoder. Hummingbird's own idle
/// timeout is not used: it restarts on every body part, so a body sent a byte at a time would
/// never time out, and headers sent a byte at a time never reach it.
struct GuardedHTTP1: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let inner: HTTP1Channel
    let readTimeout: TimeAmount
    let idleTimeout: TimeAmount
    let registry: ConnectionRegistry

    init(responder: @escaping HTTPChannelHandler.Responder, readTimeout: TimeAmount, idleTimeout: TimeAmount,
         registry: ConnectionRegistry) {
        inner = HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [RequestPhases()]))
        self.readTimeout = readTimeout
        self.idleTimeout = idleTimeout
        self.registry = registry
    }

    /// Runs on the new connection's event loop (Hummingbird's child channel initializer).
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            let guardHandler = ConnectionGuard(readTimeout: readTimeout, idleTimeout: idleTimeout, registry: registry)
            try channel.pipeline.syncOperations.addHandler(guardHandler, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }

    static func builder(readTimeout: TimeAmount, idleTimeout: TimeAmount, registry: ConnectionRegistry) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            GuardedHTTP1(responder: responder, readTimeout: readTimeout, idleTimeout: idleTimeout, registry: registry)
        }
    }
}
