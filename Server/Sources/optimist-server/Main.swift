import ArgumentParser
import Hummingbird
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `optimist-server`: the reference server of the sync protocol (docs/protocol.md).
@main
struct OptimistServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "optimist-server",
        abstract: "The reference sync server of Optimist: POST /push, POST /pull, GET /events, GET /health."
    )

    @Option(help: "TCP port to listen on (0: any free port; the chosen one is printed).")
    var port: Int

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=MODE].")
    var db = "sqlite:optimist-server.sqlite"

    @Option(help: "JSON file {\"<token>\": \"<user>\"}; requests then need Authorization: Bearer <token>.")
    var tokens: String?

    @Option(help: "File whose bytes (one trailing newline stripped; 32 or more) are the HS256 secret of accepted JWTs (user: sub).")
    var jwtSecret: String?

    @Option(help: "JWKS file (JSON {\"keys\": [...]}) of the RS256 and ES256 public keys of accepted JWTs, chosen by kid.")
    var jwks: String?

    @Option(help: "The aud a JWT must carry (a string equal to it, or a list holding it); unchecked when not given.")
    var jwtAudience: String?

    @Option(help: "Reject mutations touching COLL, or COLL/KEYPREFIX; '=message' sets the error. Repeatable.")
    var refuse: [String] = []

    @Option(help: "Largest request body in bytes (larger: 413).")
    var maxBody = 8 << 20

    @Option(help: "Most changes in one pull answer (more: true beyond).")
    var pageSize = 5000

    @Option(help: "Most bytes of changes (their JSON text) in one pull answer; one mutation larger than that travels alone.")
    var pageBytes = 4 << 20

    @Option(help: "Days that tombstones and recorded outcomes are kept (fractions allowed); older cursors get a reset.")
    var retentionDays = 30.0

    @Option(help: "Seconds a client has to send a whole request, head and body, from its first byte (later: 408 and closed).")
    var readTimeout = 30

    @Option(help: "Seconds a keep-alive connection may sit with no request before it is closed.")
    var idleTimeout = 60

    @Option(help: "Most open connections; when full, the longest-idle one is closed for a newcomer, or else the newcomer gets 503.")
    var maxConnections = 1024

    @Option(help: "Most /push and /pull requests of one user in flight at once; more wait up to 1 s, then 429.")
    var perUserConcurrency = 4

    @Option(help: "PostgreSQL statement_timeout in milliseconds, set on every connection.")
    var statementTimeoutMs = 30_000

    @Option(help: "Milliseconds one PostgreSQL transaction may take before the request answers 503 and its connection is closed.")
    var transactionTimeoutMs = 60_000

    @Option(help: "Seconds between the keepalive comments of an open GET /events stream.")
    var eventsKeepalive = 15.0

    @Option(help: "Most GET /events streams one user may hold open at once (more: 429).")
    var eventsPerUser = 16

    @Option(help: "Most mutations in one push (more: 413).")
    var maxPushMutations = RequestLimits().maxPushMutations

    @Option(help: "Most ids in one pull's unacked list (more: 400).")
    var maxUnacked = RequestLimits().maxUnacked

    @Flag(help: "Serve without --tokens on an address other than loopback: anyone who reaches it reads and writes one shared space.")
    var insecureOpen = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard maxBody > 0 else { throw ValidationError("--max-body must be positive") }
        guard pageSize > 0 else { throw ValidationError("--page-size must be positive") }
        guard pageBytes > 0 else { throw ValidationError("--page-bytes must be positive") }
        guard retentionDays > 0, retentionDays * 86_400_000 >= 1, retentionDays <= 1_000_000 else {
            throw ValidationError("--retention-days must be positive (a millisecond at least)")
        }
        for (name, value) in [("--read-timeout", readTimeout), ("--idle-timeout", idleTimeout),
                              ("--max-connections", maxConnections), ("--per-user-concurrency", perUserConcurrency),
                              ("--statement-timeout-ms", statementTimeoutMs),
                              ("--transaction-timeout-ms", transactionTimeoutMs), ("--max-push-mutations", maxPushMutations),
                              ("--max-unacked", maxUnacked), ("--events-per-user", eventsPerUser)] {
            guard value > 0 else { throw ValidationError("\(name) must be positive") }
        }
        guard eventsKeepalive >= 0.01, eventsKeepalive <= 3600 else {
            throw ValidationError("--events-keepalive must be 0.01 to 3600 seconds")
        }
        if tokens == nil, jwtSecret == nil, jwks == nil, !insecureOpen, !ListenAddress.isLoopback(host) {
            throw ValidationError("refusing to serve \(host) without authentication: anyone who reaches it could read and "
                                  + "write every record. Pass --tokens FILE, --jwt-secret FILE or --jwks FILE, listen on "
                                  + "127.0.0.1, or pass --insecure-open to serve it open all the same.")
        }
        if jwtAudience != nil, jwtSecret == nil, jwks == nil {
            throw ValidationError("--jwt-audience needs --jwt-secret or --jwks")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = getenv("LOG_LEVEL").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? .info
            return handler
        }
        let logger = Logger(label: "optimist-server")
        do {
            try await serve(logger: logger)
        } catch let error as BadRequest {
            // A configuration mistake: say it plainly, no stack of wrappers.
            throw ValidationError(error.message)
        }
    }

    private func serve(logger: Logger) async throws {
        var auth = Auth.open
        if let tokens { auth = try Auth.load(path: tokens) }
        if jwtSecret != nil || jwks != nil {
            var verifier = JWTVerifier()
            verifier.audience = jwtAudience
            if let path = jwtSecret {
                guard let bytes = readFile(path) else { throw BadRequest("cannot read JWT secret file \(path)") }
                try verifier.addSecret(fileBytes: bytes, path: path)
            }
            if let path = jwks {
                guard let bytes = readFile(path) else { throw BadRequest("cannot read JWKS file \(path)") }
                for note in try verifier.addJWKS(fileBytes: bytes, path: path) { logger.warning("\(note)") }
            }
            try verifier.checkKeys()
            auth.jwt = verifier
            logger.info("JWTs: \(verifier.keys.count) key(s)\(jwtAudience.map { ", audience \($0)" } ?? ", audience unchecked")")
        }
        var rules = [RefusalRule]()
        for text in refuse { rules.append(try RefusalRule(parsing: text)) }

        let storage: any Storage
        var postgres: PostgresStorage?
        switch try DatabaseURL.parse(db) {
        case .sqlite(let path):
            storage = try SQLiteStorage(path: path)
            logger.info("storage: SQLite \(path)")
        case .postgres(let configuration, let description):
            let pg = PostgresStorage(configuration: configuration, statementTimeoutMs: statementTimeoutMs,
                                     transactionTimeoutMs: transactionTimeoutMs, logger: logger)
            storage = pg
            postgres = pg
            logger.info("storage: \(description)")
        }

        let hub = PokeHub(storage: storage, logger: logger, perUserLimit: eventsPerUser,
                          keepaliveInterval: .milliseconds(Int64(eventsKeepalive * 1000)))
        let responder = SyncResponder(
            sync: SyncService(storage: storage, rules: RefusalRules(rules: rules), pageSize: pageSize, pageBytes: pageBytes),
            auth: auth, maxBody: maxBody,
            limits: RequestLimits(maxPushMutations: maxPushMutations, maxUnacked: maxUnacked),
            gate: UserGate(limit: perUserConcurrency, wait: .seconds(1)), hub: hub, logger: logger)
        let host = self.host
        var app = Application(
            responder: responder,
            server: GuardedHTTP1.builder(readTimeout: .seconds(Int64(readTimeout)), idleTimeout: .seconds(Int64(idleTimeout)),
                                         registry: ConnectionRegistry(limit: maxConnections)),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                // Tests and scripts read the port from this line (so --port 0 works).
                let port = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]" : host
                writeLine(toStandardOutput: "listening on http://\(shown):\(port)")
            },
            logger: logger)
        let (ready, schemaReady) = AsyncStream<Void>.makeStream()
        let (listenReady, schemaReadyToListen) = AsyncStream<Void>.makeStream()
        if let postgres {
            // The pool runs as a service: the ServiceGroup stops it after the HTTP server has
            // drained, so in-flight requests keep their database connections to the end.
            app.addServices(postgres.client)
            app.beforeServerStarts {
                try await postgres.migrate()
                schemaReady.finish()
                schemaReadyToListen.finish()
            }
            app.addServices(ChangeListener(client: postgres.client, hub: hub, logger: logger, ready: listenReady))
        } else {
            schemaReady.finish()  // SQLite migrated when it opened
        }
        app.addServices(hub)
        // Added after the pool: stopped before it.
        app.addServices(Pruner(storage: storage, retentionMilliseconds: Int64(retentionDays * 86_400_000),
                               logger: logger, ready: ready))
        // SIGTERM and SIGINT: stop accepting, finish in-flight requests, exit 0.
        try await app.runService()
        logger.info("stopped")
    }
}
