import NIOSSL
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `--db` names: `sqlite:PATH` or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…]`.
enum DatabaseURL {
    case sqlite(path: String)
    case postgres(PostgresClient.Configuration, description: String)

    static func parse(_ text: String) throws(BadRequest) -> DatabaseURL {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }  // sqlite:///abs/path
            guard !path.isEmpty else { throw BadRequest("--db sqlite: needs a path") }
            return .sqlite(path: path)
        }
        for scheme in ["postgres://", "postgresql://"] where text.hasPrefix(scheme) {
            return try postgres(String(text.dropFirst(scheme.count)), original: text)
        }
        throw BadRequest("--db must be sqlite:PATH or postgres://USER@HOST:PORT/DB")
    }

    private static func postgres(_ rest: String, original: String) throws(BadRequest) -> DatabaseURL {
        var rest = Substring(rest)
        var query = Substring()
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        var database: String?
        if let slash = rest.firstIndex(of: "/") {
            database = try decode(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        var username = "postgres"
        var password = getenv("PGPASSWORD").map { String(cString: $0) }
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                username = try decode(userinfo[..<colon])
                password = try decode(userinfo[userinfo.index(after: colon)...])
            } else {
                username = try decode(userinfo)
            }
        }
        var host = String(rest)
        var port = 5432
        if let colon = rest.lastIndex(of: ":"), !rest[colon...].contains("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                throw BadRequest("bad port in \(original)")
            }
            port = p
            host = String(rest[..<colon])
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw BadRequest("no host in \(original)") }

        var tls = PostgresClient.Configuration.TLS.disable
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, kv[0] == "sslmode" else { continue }
            // As libpq: require checks no certificate, verify-ca the chain, verify-full the name too.
            var config = TLSConfiguration.makeClientConfiguration()
            switch kv[1] {
            case "disable": continue
            case "prefer", "allow": config.certificateVerification = .none; tls = .prefer(config)
            case "require": config.certificateVerification = .none; tls = .require(config)
            case "verify-ca": config.certificateVerification = .noHostnameVerification; tls = .require(config)
            case "verify-full": tls = .require(config)
            default: throw BadRequest("unknown sslmode \(kv[1])")
            }
        }
        let configuration = PostgresClient.Configuration(host: host, port: port, username: username, password: password,
                                                         database: database, tls: tls)
        // Shown in logs: everything but the password.
        return .postgres(configuration, description: "postgres://\(username)@\(host):\(port)/\(database ?? "")")
    }

    /// Percent-decoding of a URL part.
    private static func decode(_ part: Substring) throws(BadRequest) -> String {
        var bytes = [UInt8]()
        var it = Array(part.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else {
                    throw BadRequest("bad percent escape in the database URL")
                }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
