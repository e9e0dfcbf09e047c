import Hummingbird
import OptimistModel

/// Bearer tokens from `--tokens FILE` (a JSON object `{"<token>": "<user>"}`). Each user has
/// their own space of records; without a tokens file everyone shares the space of user "".
struct Auth: Sendable {
    /// nil: no tokens file, no authentication. Keys compare bytewise.
    let users: [Key: String]?

    static let open = Auth(users: nil)

    static func load(path: String) throws(BadRequest) -> Auth {
        guard let bytes = readFile(path) else { throw BadRequest("cannot read tokens file \(path)") }
        let parsed: JSON
        do throws(JSONParser.Failure) {
            parsed = try bytes.withUnsafeBufferPointer { (b) throws(JSONParser.Failure) in try JSONParser.parse(b) }
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

    /// The user a request speaks for, nil when it must be refused (401).
    func user(for request: Request) -> String? {
        guard let users else { return "" }
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingSuffixSpaces()
        return users[Key(token)]
    }
}

extension Substring {
    fileprivate func trimmingSuffixSpaces() -> String {
        var s = self
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
