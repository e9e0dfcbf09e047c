import NIOCore
import NIOHTTPTypes

/// The deadlines of one connection, so that a slow or silent client cannot hold it:
///
/// - reading: from the first byte of a request to its last (head and body together) the client
///   has `readTimeout`. A per-read timer would not do: a client sending one byte a second never
///   lets it fire, and a byte-by-byte sender of headers is invisible above the HTTP decoder.
/// - idle: between requests (and before the first) a keep-alive connection is closed after
///   `idleTimeout` of silence.
/// - answering: no deadline. That time is the server's own (the database has its statement
///   timeout, a user's waiting its bound in UserGate).
///
/// It sits first in the pipeline, before the HTTP decoder, to see raw bytes arrive;
/// RequestPhases, after the decoder, tells it where requests and answers begin and end.
/// All of it runs on the connection's event loop.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum Phase { case idle, reading, answering, refused }

    private let readTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let registry: ConnectionRegistry
    private var id: ConnectionRegistry.ID?
    /// This handler's own context: raw bytes (the 408, the 503) must enter the pipeline here,
    /// below the HTTP encoder.
    private var context: ChannelHandlerContext?
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?
    private var requestOpen = false
    private var answersOwed = 0
    /// Bytes of a next request came while an answer was still owed: its reading deadline starts
    /// when that answer is out.
    private var bytesWaiting = false

    init(readTimeout: TimeAmount, idleTimeout: TimeAmount, registry: ConnectionRegistry) {
        self.readTimeout = readTimeout
        self.idleTimeout = idleTimeout
        self.registry = registry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { admit() }
    }

    func channelActive(context: ChannelHandlerContext) {
        if id == nil, phase != .refused { admit() }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        forget()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch phase {
        case .refused:
            return  // dropped: this connection only waits for its 503 to reach the client
        case .idle:
            enter(.reading)
        case .answering:
            if !requestOpen { bytesWaiting = true }
        case .reading:
            break
        }
        context.fireChannelRead(data)
    }

    // MARK: told by RequestPhases

    func requestHead() {
        requestOpen = true
        answersOwed += 1
        if phase != .reading { enter(.reading) }
    }

    func requestEnd() {
        requestOpen = false
        settle()
    }

    func answerEnd() {
        answersOwed = max(0, answersOwed - 1)
        settle()
    }

    // MARK: -

    private func settle() {
        guard phase != .refused, !requestOpen else { return }
        if answersOwed > 0 {
            enter(.answering)
        } else if bytesWaiting {
            bytesWaiting = false
            enter(.reading)
        } else {
            enter(.idle)
        }
    }

    private func admit() {
        guard let context else { return }
        switch registry.admit(context.channel) {
        case .admitted(let id):
            self.id = id
            enter(.idle)
        case .refused:
            refuse()
        }
    }

    /// Over the connection cap with no idle connection to evict: a 503 and the end of the
    /// output at once, so the client hears why; what it sends is dropped, and the connection is
    /// closed in full a moment later (closing with its request unread would reset it, and the
    /// client might never read the answer).
    private func refuse() {
        guard let context else { return }
        phase = .refused
        let body = #"{"error":"the server has too many connections, try again"}"#
        let text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Retry-After: 1\r\nConnection: close\r\n\r\n" + body
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: text)), promise: nil)
        context.close(mode: .output, promise: nil)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) {
            context.close(promise: nil)
        }
    }

    private func enter(_ next: Phase) {
        guard phase != .refused, let context else { return }
        let wasIdle = phase == .idle
        timer?.cancel()
        timer = nil
        phase = next
        switch next {
        case .reading:
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: readTimeout) { [self] in readTimedOut() }
        case .idle:
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: idleTimeout) {
                context.close(promise: nil)
            }
        case .answering, .refused:
            break
        }
        if let id, wasIdle != (next == .idle) { registry.setIdle(id, next == .idle) }
    }

    /// A request that did not arrive in time: a 408 (only when nothing of an answer has been
    /// written yet, which is when the HTTP layer is still waiting for the head), then closed.
    private func readTimedOut() {
        timer = nil
        guard let context else { return }
        if answersOwed == 0 {
            let body = #"{"error":"the request did not arrive within the server's read timeout"}"#
            let text = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: text)), promise: nil)
        }
        context.close(promise: nil)
    }

    private func forget() {
        timer?.cancel()
        timer = nil
        if let id {
            registry.remove(id)
            self.id = nil
        }
    }
}

/// Sits after the HTTP decoder and tells the ConnectionGuard where each request and each
/// answer ends (the guard, before the decoder, sees only bytes).
final class RequestPhases: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var connection: ConnectionGuard?

    func handlerAdded(context: ChannelHandlerContext) {
        connection = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: connection?.requestHead()
        case .end: connection?.requestEnd()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { connection?.answerEnd() }
    }
}
