import Foundation
import HammockJSON
import JWTKit
import Synchronization
import _CryptoExtras

/// An access token's claims as JSON: the registered ones the server sets, and a user's own.
struct AccessToken: JWTPayload {
    /// The claims the server sets; a user's `claims` may not name them.
    static let registeredClaims: Set<String> = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "scope", "roles", "client_id"]

    var claims: JSONObject

    init(claims: JSONObject) { self.claims = claims }

    init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSON(from: decoder) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The claims are not a JSON object"))
        }
        claims = object
    }

    func encode(to encoder: any Encoder) throws { try JSON.object(claims).encode(to: encoder) }

    /// Nothing here: the times are checked against the server's clock (``TokenKeys/verify(_:now:)``),
    /// not the machine's, so that a test moves time instead of sleeping.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Why a token is refused: the `error_description` of a 401's `WWW-Authenticate`.
struct TokenRejection: Error, Sendable, Hashable {
    var reason: String
    /// What the journal notes when a switch, not the token itself, ended it.
    var switchNote: String?
    init(_ reason: String, switchNote: String? = nil) {
        self.reason = reason
        self.switchNote = switchNote
    }
}

/// The keys that sign the server's tokens and check them: the one in use and those it replaced (still
/// accepted, still in the JWKS, until the server forgets them).
///
/// Why the header is read before JWTKit verifies: JWTKit picks the key by `kid` and verifies with that
/// key's own algorithm, so `alg: none` or an HS256 token signed with the public key already fail its
/// signature check; reading `alg` first turns that into a reason a developer can act on.
final class TokenKeys: Sendable {
    /// Tokens longer than this are refused unread: a signed token of the server's is under 2 KiB with
    /// every claim a test gives (RS256's signature is 342 characters).
    static let maximumLength = 8192

    let algorithm: AuthSettings.SigningAlgorithm
    private let collection: JWTKeyCollection
    /// The key ids in the order made, the one in use last; and the public half of each, as a JWK.
    private let published: Mutex<[(kid: String, jwk: JSON?)]>

    private init(algorithm: AuthSettings.SigningAlgorithm) {
        self.algorithm = algorithm
        collection = JWTKeyCollection()
        published = Mutex([])
    }

    /// Keys for `algorithm`, with one made (or, for HS256, taken from the secret).
    static func make(_ algorithm: AuthSettings.SigningAlgorithm) async throws -> TokenKeys {
        let keys = TokenKeys(algorithm: algorithm)
        try await keys.rotate()
        return keys
    }

    /// The id of the key that signs.
    var currentKeyID: String { published.withLock { $0.last?.kid ?? "" } }

    /// Makes a new key and signs with it from now on; tokens signed with the earlier ones still verify.
    func rotate() async throws {
        let kid = Self.randomID(bytes: 8)
        let identifier = JWKIdentifier(string: kid)
        let jwk: JSON?
        switch algorithm {
        case .es256:
            let key = ES256PrivateKey()
            await collection.add(ecdsa: key, kid: identifier)
            let parameters = key.publicKey.parameters
            jwk = [
                "kty": "EC", "crv": "P-256", "x": .string(parameters?.x ?? ""), "y": .string(parameters?.y ?? ""),
                "kid": .string(kid), "use": "sig", "alg": "ES256",
            ]
        case .rs256:
            // 2048 bits: the least RFC 7518 §3.3 allows, and what identity providers publish.
            let key = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
            await collection.add(rsa: key, digestAlgorithm: .sha256, kid: identifier)
            let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
            jwk = [
                "kty": "RSA", "n": .string(Self.base64URL(Array(modulus))),
                "e": .string(Self.base64URL(Array(exponent))), "kid": .string(kid), "use": "sig", "alg": "RS256",
            ]
        case .hs256(let secret):
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: identifier)
            jwk = nil
        }
        published.withLock { $0.append((kid, jwk)) }
    }

    /// Signs with a new key (``rotate()``) and, unless `keepingPrevious`, forgets the others: tokens
    /// they signed stop verifying and leave the JWKS.
    func rotate(keepingPrevious: Bool) async throws {
        try await rotate()
        guard !keepingPrevious else { return }
        let current = currentKeyID
        _ = await collection.removeAll(except: [JWKIdentifier(string: current)])
        published.withLock { $0.removeAll { $0.kid != current } }
    }

    /// The ids of the keys that verify, the one in use last.
    var keyIDs: [String] { published.withLock { $0.map(\.kid) } }

    /// The JWKS document (RFC 7517 §5): the public keys that verify the server's tokens, newest first.
    var jwks: JSON {
        let keys = published.withLock { $0 }.reversed().compactMap(\.jwk)
        return ["keys": .array(keys)]
    }

    /// `claims` signed with the key in use.
    func sign(_ claims: JSONObject) async throws -> String {
        let kid = currentKeyID
        var header = JWTHeader()
        header.typ = "JWT"
        return try await collection.sign(AccessToken(claims: claims), kid: JWKIdentifier(string: kid), header: header)
    }

    /// The claims of `token` if one of the keys signed it with the algorithm in use; its times are the
    /// caller's to check.
    func verify(_ token: String) async throws(TokenRejection) -> JSONObject {
        guard token.utf8.count <= Self.maximumLength else {
            throw TokenRejection("The access token is longer than \(Self.maximumLength) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URLDecoded(parts[0]),
            case .object(let header)? = try? JSON(parsing: headerBytes)
        else { throw TokenRejection("The access token is not a JWT (three base64url parts, the first a JSON header)") }
        guard case .string(let alg)? = header["alg"], alg == algorithm.name else {
            let given = header["alg"]?.stringValue.map { "'\($0.prefix(20))'" } ?? "no algorithm"
            throw TokenRejection("The access token is signed with \(given); this server signs with \(algorithm.name)")
        }
        let known = published.withLock { $0.map(\.kid) }
        guard case .string(let kid)? = header["kid"], known.contains(kid) else {
            throw TokenRejection("The access token names no key of this server's (kid)")
        }
        do {
            return try await collection.verify(token, as: AccessToken.self).claims
        } catch {
            throw TokenRejection("The access token's signature does not verify")
        }
    }

    static func randomID(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Self.base64URL((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    static func base64URLDecoded(_ text: Substring) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
