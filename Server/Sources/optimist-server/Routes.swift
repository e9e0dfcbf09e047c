import Hummingbird
import Logging
import OptimistModel
import OptimistProtocol

/// The HTTP face of the server: `POST /push`, `POST /pull`, `GET /events`, `GET /health`. A
/// responder of its own rather than a router: four fixed paths, and every answer (404 and 405 included) goes
/// through one place that writes the JSON error bodies and the one log line per request.
struct SyncResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let sync: SyncService
    let auth: Auth
    let maxBody: Int
    let limits: RequestLimits
    let gate: UserGate
    let hub: PokeHub
    let logger: Logger

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var clientID: String?
        let response = await route(request, clientID: &clientID)
        let micros = (ContinuousClock.now - start).microseconds
        var metadata: Logger.Metadata = [:]
        if let clientID { metadata["client_id"] = .string(clientID) }
        logger.info("\(request.method) \(request.uri.path) \(response.status.code) \(micros / 1000).\(micros % 1000 / 100)ms",
                    metadata: metadata)
        return response
    }

    private func route(_ request: Request, clientID: inout String?) async -> Response {
        let path = request.uri.path
        switch (path, request.method) {
        case ("/health", .get), ("/health", .head):
            _ = await readBody(request, limit: 0)
            do {
                try await sync.storage.ping()
                return json(.ok, #"{"status":"ok"}"#)
            } catch {
                logger.error("health check failed: \(error)")
                return failure(.serviceUnavailable, "the database does not answer", retryAfter: true)
            }
        case ("/push", .post), ("/pull", .post):
            return await syncRequest(request, push: path == "/push", clientID: &clientID)
        case ("/events", .get):
            return await events(request)
        case ("/health", _), ("/push", _), ("/pull", _), ("/events", _):
            _ = await readBody(request, limit: 0)
            var response = failure(.methodNotAllowed, "\(request.method) is not allowed on \(path)")
            response.headers[.allow] = path == "/health" || path == "/events" ? "GET" : "POST"
            return response
        default:
            _ = await readBody(request, limit: 0)
            return failure(.notFound, "no such endpoint: \(path)")
        }
    }

    /// `GET /events`: the user's stream of pokes (``EventStream``).
    private func events(_ request: Request) async -> Response {
        _ = await readBody(request, limit: 0)
        switch auth.user(for: request, now: Double(unixMilliseconds()) / 1000) {
        case .failure(let refusal): return failure(.unauthorized, "unauthorized: \(refusal.reason)")
        case .success(let user):
            switch hub.open(user: user) {
            case .stream(let id, let mailbox): return EventStream.response(id: id, mailbox: mailbox, hub: hub)
            case .tooMany:
                return failure(.tooManyRequests, "this user has \(hub.perUserLimit) event streams open already", retryAfter: true)
            case .shuttingDown: return failure(.serviceUnavailable, "the server is shutting down", retryAfter: true)
            }
        }
    }

    private func syncRequest(_ request: Request, push: Bool, clientID: inout String?) async -> Response {
        let user: String
        switch auth.user(for: request, now: Double(unixMilliseconds()) / 1000) {
        case .success(let u): user = u
        case .failure(let refusal):
            _ = await readBody(request, limit: 0)
            return failure(.unauthorized, "unauthorized: \(refusal.reason)")
        }
        guard RequestLimits.isJSON(request.headers[.contentType]) else {
            _ = await readBody(request, limit: 0)
            return failure(.unsupportedMediaType, "the body must be sent as Content-Type: application/json")
        }
        let parsed: JSON
        switch await readBody(request, limit: maxBody) {
        case .tooLarge: return failure(.contentTooLarge, "the body is over this server's limit of \(maxBody) bytes")
        case .broken: return failure(.badRequest, "the body could not be read")
        case .complete(let body):
            let result: Result<JSON, JSONParser.Failure> = body.withUnsafeReadableBytes { raw in
                do throws(JSONParser.Failure) { return .success(try JSONParser.parse(raw.bindMemory(to: UInt8.self))) } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let json): parsed = json
            case .failure(let error): return failure(.badRequest, "malformed JSON: \(error)")
            }
        }
        do {
            if push {
                let req: PushRequest
                do throws(ProtocolViolation) { req = try PushRequest.decode(parsed) } catch { throw BadRequest(error) }
                clientID = req.clientID
                guard req.mutations.count <= limits.maxPushMutations else {
                    return failure(.contentTooLarge, "a push carries at most \(limits.maxPushMutations) mutations on this server "
                                   + "(this one has \(req.mutations.count)): send fewer per request")
                }
                guard let (results, changes) = try await gate.run(user, { try await sync.push(user: user, req) }) else {
                    return tooManyInFlight()
                }
                // A storage that announces changes reaches this process's streams through the
                // database, like every other process's.
                if !sync.storage.announcesChanges { hub.changed(changes) }
                return json(.ok, PushReply(results: results).encoded())
            } else {
                let req: PullRequest
                do throws(ProtocolViolation) { req = try PullRequest.decode(parsed) } catch { throw BadRequest(error) }
                clientID = req.clientID
                guard req.unacked.count <= limits.maxUnacked else {
                    throw BadRequest("a pull lists at most \(limits.maxUnacked) unacked ids on this server (this one has \(req.unacked.count))")
                }
                guard let answer = try await gate.run(user, { try await sync.pull(user: user, req) }) else {
                    return tooManyInFlight()
                }
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(bytes: answer.encoded())))
            }
        } catch let error as BadRequest {
            return failure(.badRequest, error.message)
        } catch StorageError.transient(let message) {
            logger.warning("transient database failure: \(message)")
            return failure(.serviceUnavailable, "the database is busy, try again", retryAfter: true)
        } catch {
            logger.error("request failed: \(error)")
            return failure(.internalServerError, "internal error")
        }
    }

    private enum Body {
        case complete(ByteBuffer)
        case tooLarge
        case broken
    }

    /// Reads the whole body, or up to `limit` bytes. A body over the limit is still read (and
    /// dropped), up to a bound: a client that is still sending would otherwise see its
    /// connection reset instead of the 413 that tells it to send less.
    private func readBody(_ request: Request, limit: Int) async -> Body {
        let drainBound = limit + 64 << 20
        var buffer = ByteBuffer()
        var total = 0
        do {
            for try await chunk in request.body {
                total += chunk.readableBytes
                if total > drainBound { break }
                if total <= limit { buffer.writeImmutableBuffer(chunk) }
            }
        } catch {
            return .broken
        }
        return total > limit ? .tooLarge : .complete(buffer)
    }

    private func tooManyInFlight() -> Response {
        failure(.tooManyRequests, "this user has \(gate.limit) sync requests in flight already, try again", retryAfter: true)
    }

    private func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func failure(_ status: HTTPResponse.Status, _ message: String, retryAfter: Bool = false) -> Response {
        var response = json(status, WireProtocol.errorBody(message))
        if retryAfter { response.headers[.retryAfter] = "1" }
        return response
    }
}

extension Duration {
    fileprivate var microseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }
}
