import Hummingbird
import OptimistModel

/// Who a request speaks for: bearer tokens from `--tokens FILE` (a JSON object
/// `{"<token>": "<user>"}`) and JSON Web Tokens (`--jwt-secret`, `--jwks`: see ``JWTVerifier``),
/// a token from the file and a JWT whose `sub` names the same user being one user. Each user has
/// their own space of records; with neither, everyone shares the space of user "".
struct Auth: Sendable {
    /// nil: no tokens file. Keys compare bytewise.
    var users: [Key: String]?
    /// nil: no JWT keys.
    var jwt: JWTVerifier?

    static let open = Auth(users: nil)

    /// Whether requests must carry a token.
    var isRequired: Bool { users != nil || jwt != nil }

    static func load(path: String) throws(BadRequest) -> Auth {
        guard let bytes = readFile(path) else { throw BadRequest("cannot read tokens file \(path)") }
        let parsed: JSON
        do throws(JSONParser.Failure) {
            parsed = try parseJSON(bytes)
        } catch {
            throw BadRequest("tokens file \(path): \(error)")
        }
        guard case .object(let object) = parsed else { throw BadRequest("tokens file \(path) must be a JSON object") }
        var users = [Key: String]()
        for (token, user) in object {
            guard case .string(let name) = user, !token.string.isEmpty else {
                throw BadRequest("tokens file \(path): every member must be \"<token>\": \"<user>\"")
            }
            users[token] = name
        }
        return Auth(users: users)
    }

    /// The user a request speaks for, or why it must be refused (401).
    func user(for request: Request, now: Double) -> Result<String, JWTVerifier.Refusal> {
        guard isRequired else { return .success("") }
        guard let header = request.headers[.authorization] else { return .failure(.init("missing bearer token")) }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .failure(.init("missing bearer token")) }
        let token = parts[1].trimmingSuffixSpaces()
        if let user = users?[Key(token)] { return .success(user) }
        // A token the file does not know goes to the JWT keys when it has a dot (a JWT's
        // separator), so their refusal says why.
        if let jwt, token.utf8.contains(UInt8(ascii: ".")) { return jwt.user(token: token, now: now) }
        return .failure(.init("unknown bearer token"))
    }
}

extension Substring {
    fileprivate func trimmingSuffixSpaces() -> String {
        var s = self
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
