import Crypto
import CryptoExtras
import OptimistModel

/// JSON Web Tokens (RFC 7519) as bearer tokens: HS256 with a shared secret (`--jwt-secret`),
/// RS256 and ES256 with the public keys of a JWKS (`--jwks`), the user being the token's `sub`.
///
/// What a token must be to be accepted:
/// - three base64url parts; a header whose `alg` is the algorithm of the key it names (HS256,
///   RS256 or ES256: `none` and every other algorithm are refused, and so is a header with
///   `crit`, whose extensions this server does not know);
/// - the key: the one whose `kid` the header gives (an unknown `kid` is refused); a header with no
///   `kid` is accepted only when the server has exactly one key;
/// - a valid signature over the first two parts;
/// - a payload with `sub` (a non-empty string: the user id), `exp` (a number of seconds since
///   1970; the token is refused from that second on, with no leeway), `nbf` when present (the
///   token is refused until that second, less 60 s for clocks that disagree), and, when the server
///   has an audience (`--jwt-audience`), an `aud` that is that audience or a list holding it.
struct JWTVerifier: Sendable {
    enum Algorithm: String, Sendable {
        case hs256 = "HS256", rs256 = "RS256", es256 = "ES256"
    }

    /// One key a token can name.
    struct VerifyingKey: Sendable {
        let kid: String?
        let algorithm: Algorithm
        let verify: @Sendable (_ signature: [UInt8], _ signed: [UInt8]) -> Bool
    }

    /// Why a token was refused: said in the 401's `error`, never with the token itself.
    struct Refusal: Error, Sendable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private(set) var keys: [VerifyingKey] = []
    var audience: String?

    /// Seconds a token's `nbf` may lie in the future (clocks that disagree).
    static let clockSkew = 60.0

    var isEmpty: Bool { keys.isEmpty }

    /// Adds the HS256 key from a `--jwt-secret` file: its bytes, one trailing newline stripped.
    mutating func addSecret(fileBytes: [UInt8], path: String) throws(BadRequest) {
        var bytes = fileBytes
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast(); if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() } }
        // RFC 7518 §3.2: an HS256 key must be at least as long as the hash (32 bytes).
        guard bytes.count >= 32 else {
            throw BadRequest("JWT secret \(path) has \(bytes.count) bytes; HS256 needs at least 32 (RFC 7518 §3.2)")
        }
        let key = SymmetricKey(data: bytes)
        keys.append(VerifyingKey(kid: nil, algorithm: .hs256) { signature, signed in
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key)
        })
    }

    /// Adds the RS256 and ES256 public keys of a JWKS (`{"keys": [...]}`, RFC 7517). Keys of
    /// other kinds (an `oct`, `OKP` or another curve's key, a key for encryption) are skipped and
    /// reported in the returned notes; a set with no usable key, a key without `kid` in a set of
    /// several, or two keys with one `kid` is a configuration error.
    mutating func addJWKS(fileBytes: [UInt8], path: String) throws(BadRequest) -> [String] {
        let parsed: JSON
        do throws(JSONParser.Failure) {
            parsed = try parseJSON(fileBytes)
        } catch {
            throw BadRequest("JWKS \(path): \(error)")
        }
        guard case .object(let set) = parsed, case .array(let list)? = set["keys"] else {
            throw BadRequest("JWKS \(path) must be a JSON object with a \"keys\" array")
        }
        var notes: [String] = []
        var added: [VerifyingKey] = []
        for (i, entry) in list.enumerated() {
            guard case .object(let jwk) = entry else { throw BadRequest("JWKS \(path): keys[\(i)] is not an object") }
            let kid = jwk["kid"]?.string
            let name = kid.map { "key \"\($0)\"" } ?? "keys[\(i)]"
            if let use = jwk["use"]?.string, use != "sig" {
                notes.append("JWKS \(path): \(name) skipped (use \"\(use)\", not \"sig\")")
                continue
            }
            let kty = jwk["kty"]?.string ?? ""
            let alg = jwk["alg"]?.string
            switch kty {
            case "RSA" where alg == nil || alg == "RS256":
                let n = try Self.member(jwk, "n", of: name, in: path), e = try Self.member(jwk, "e", of: name, in: path)
                let key: _RSA.Signing.PublicKey
                do { key = try _RSA.Signing.PublicKey(n: n, e: e) } catch {
                    throw BadRequest("JWKS \(path): \(name) is not a usable RSA key (2048 bits or more): \(error)")
                }
                added.append(VerifyingKey(kid: kid, algorithm: .rs256) { signature, signed in
                    key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signed,
                                         padding: .insecurePKCS1v1_5)
                })
            case "EC" where jwk["crv"]?.string == "P-256" && (alg == nil || alg == "ES256"):
                let x = try Self.member(jwk, "x", of: name, in: path), y = try Self.member(jwk, "y", of: name, in: path)
                guard x.count == 32, y.count == 32 else { throw BadRequest("JWKS \(path): \(name): x and y must be 32 bytes each") }
                let key: P256.Signing.PublicKey
                do { key = try P256.Signing.PublicKey(x963Representation: [0x04] + x + y) } catch {
                    throw BadRequest("JWKS \(path): \(name) is not a point of P-256: \(error)")
                }
                added.append(VerifyingKey(kid: kid, algorithm: .es256) { signature, signed in
                    // JWS carries ES256 signatures as r || s, 32 bytes each (RFC 7518 §3.4).
                    guard signature.count == 64, let s = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
                    return key.isValidSignature(s, for: signed)
                })
            default:
                notes.append("JWKS \(path): \(name) skipped (kty \"\(kty)\"\(alg.map { ", alg \"\($0)\"" } ?? ""): only RS256 and ES256 on P-256 are accepted)")
            }
        }
        guard !added.isEmpty else { throw BadRequest("JWKS \(path) has no RS256 or ES256 signing key") }
        keys += added
        return notes
    }

    /// Checks the key set once every key is added: each key findable by its `kid`.
    func checkKeys() throws(BadRequest) {
        guard keys.count > 1 else { return }
        var seen = Set<String>()
        for k in keys {
            guard let kid = k.kid else {
                throw BadRequest(k.algorithm == .hs256
                    ? "--jwt-secret and --jwks together: tokens name their key by kid, and the secret has none; use one of them"
                    : "JWKS: with several keys, every key needs a \"kid\"")
            }
            guard seen.insert(kid).inserted else { throw BadRequest("JWKS: two keys with kid \"\(kid)\"") }
        }
    }

    private static func member(_ jwk: [Key: JSON], _ name: String, of key: String, in path: String) throws(BadRequest) -> [UInt8] {
        guard let text = jwk[Key(name)]?.string, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw BadRequest("JWKS \(path): \(key) needs \"\(name)\" in base64url")
        }
        return bytes
    }

    /// The user (`sub`) of a valid token, at `now` (seconds since 1970).
    func user(token: String, now: Double) -> Result<String, Refusal> {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(Refusal("not a JSON Web Token (three base64url parts)")) }
        guard let headerBytes = Base64URL.decode(parts[0]), case .object(let header)? = Self.json(headerBytes) else {
            return .failure(Refusal("the token's header is not base64url JSON"))
        }
        guard let algName = header["alg"]?.string else { return .failure(Refusal("the token's header has no alg")) }
        guard let alg = Algorithm(rawValue: algName) else {
            return .failure(Refusal("alg \"\(algName)\" is not accepted (HS256, RS256 or ES256)"))
        }
        if header["crit"] != nil { return .failure(Refusal("the token's header has crit extensions this server does not know")) }
        guard !parts[2].isEmpty else { return .failure(Refusal("the token has no signature")) }
        let key: VerifyingKey
        if let kidValue = header["kid"] {
            guard let kid = kidValue.string, let k = keys.first(where: { $0.kid == kid }) else {
                return .failure(Refusal("no key with the token's kid"))
            }
            key = k
        } else {
            guard keys.count == 1 else { return .failure(Refusal("the token names no kid and this server has several keys")) }
            key = keys[0]
        }
        guard key.algorithm == alg else { return .failure(Refusal("alg \(algName) is not the algorithm of the token's key")) }
        guard let signature = Base64URL.decode(parts[2]) else { return .failure(Refusal("the token's signature is not base64url")) }
        let signed = Array(token.utf8.prefix(parts[0].count + 1 + parts[1].count))
        guard key.verify(signature, signed) else { return .failure(Refusal("the token's signature does not verify")) }
        guard let payloadBytes = Base64URL.decode(parts[1]), case .object(let claims)? = Self.json(payloadBytes) else {
            return .failure(Refusal("the token's payload is not base64url JSON"))
        }
        guard let sub = claims["sub"]?.string, !sub.isEmpty else { return .failure(Refusal("the token has no sub")) }
        guard let exp = claims["exp"]?.number else { return .failure(Refusal("the token has no exp")) }
        guard now < exp else { return .failure(Refusal("the token has expired")) }
        if let nbfValue = claims["nbf"] {
            guard let nbf = nbfValue.number else { return .failure(Refusal("the token's nbf is not a number")) }
            guard now + Self.clockSkew >= nbf else { return .failure(Refusal("the token is not valid yet (nbf)")) }
        }
        if let audience {
            switch claims["aud"] {
            case .string(let a)? where a == audience: break
            case .array(let list)? where list.contains(where: { $0.string == audience }): break
            default: return .failure(Refusal("the token is not for this audience"))
            }
        }
        return .success(sub)
    }

    private static func json(_ bytes: [UInt8]) -> JSON? {
        try? parseJSON(bytes)
    }
}

/// Base64url without padding (RFC 4648 §5), as JWTs and JWKs write their bytes; padding is
/// tolerated on input.
enum Base64URL {
    static func decode(_ text: String) -> [UInt8]? { decode(Substring(text).utf8) }

    static func decode(_ chars: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var acc: UInt32 = 0, bits = 0, padding = 0
        for c in chars {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            case UInt8(ascii: "="): padding += 1; continue
            default: return nil
            }
            guard padding == 0 else { return nil }  // nothing after padding
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        // Leftover bits must be fewer than a byte and zero (a canonical encoding); one leftover
        // character (6 bits) cannot end a valid encoding.
        guard bits < 6, acc & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
