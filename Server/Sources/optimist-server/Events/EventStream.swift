import Hummingbird
import ServiceLifecycle

/// The answer to `GET /events`: a Server-Sent Events stream that stays open. It begins with a
/// `ready` event (the client pulls then: what changed while it had no stream was not poked),
/// then carries a `poke` event whenever a space the user sees changed, and a `: keepalive`
/// comment every `--events-keepalive` seconds (15). Each event's data is `{}`: a poke says "pull", never what changed, so it
/// can leak nothing a pull would not show and be lost without losing anything.
enum EventStream {
    static let ready = ByteBuffer(string: "retry: 1000\nevent: ready\ndata: {}\n\n")
    static let poke = ByteBuffer(string: "event: poke\ndata: {}\n\n")
    static let keepalive = ByteBuffer(string: ": keepalive\n\n")

    static func response(id: Int, mailbox: Mailbox, hub: PokeHub) -> Response {
        let body = ResponseBody { writer in
            defer { hub.close(id) }
            // The server's shutdown ends the stream (its client reconnects elsewhere or later)
            // rather than waiting for the client to leave.
            try await withGracefulShutdownHandler {
                try await writer.write(ready)
                while let item = await mailbox.next() {
                    try await writer.write(item == .poke ? poke : keepalive)
                }
            } onGracefulShutdown: {
                mailbox.close()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }
}

