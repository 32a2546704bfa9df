import Foundation
public import HammockJSON
public import HammockServer
import HammockWire
import JWTKit
import Synchronization
import _CryptoExtras

/// Signs and checks a mock's access tokens as JWTs with jwt-kit: ES256 (a P-256 key), RS256 (a 2048-bit
/// RSA key) or HS256 (the settings' secret). `hammock serve` and `HammockServerTesting` use it; pass it
/// to a `MockServer` you make yourself (`tokenSigner: JWTAccessTokens()`).
public struct JWTAccessTokens: AccessTokenSigner {
    public init() {}

    public func keyring(for algorithm: AuthSettings.SigningAlgorithm) async throws -> any AccessTokenKeyring {
        let keyring = JWTKeyring(algorithm: algorithm)
        try await keyring.rotate(keepingPrevious: true)
        return keyring
    }
}

/// The keys of one server: jwt-kit's collection, and each key's id and public half in the order made.
final class JWTKeyring: AccessTokenKeyring {
    let algorithm: AuthSettings.SigningAlgorithm
    private let collection = JWTKeyCollection()
    private let published = Mutex<[(kid: String, jwk: JSON?)]>([])

    init(algorithm: AuthSettings.SigningAlgorithm) { self.algorithm = algorithm }

    var keyIDs: [String] { published.withLock { $0.map(\.kid) } }

    var jwks: JSON { ["keys": .array(published.withLock { $0 }.reversed().compactMap(\.jwk))] }

    func sign(_ claims: JSONObject) async throws -> String {
        let kid = published.withLock { $0.last?.kid ?? "" }
        var header = JWTHeader()
        header.typ = "JWT"
        return try await collection.sign(Claims(claims), kid: JWKIdentifier(string: kid), header: header)
    }

    func verify(_ token: String, keyID: String) async throws -> JSONObject {
        // jwt-kit picks the key by the header's kid (checked against ours by the engine) and verifies with
        // that key's own algorithm, whatever the header's alg says.
        try await collection.verify(token, as: Claims.self).object
    }

    func rotate(keepingPrevious: Bool) async throws {
        let kid = Self.randomID()
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
                "kty": "RSA", "n": .string(Base64URL.encode(Array(modulus))), "e": .string(Base64URL.encode(Array(exponent))),
                "kid": .string(kid), "use": "sig", "alg": "RS256",
            ]
        case .hs256(let secret):
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: identifier)
            jwk = nil
        }
        published.withLock { $0.append((kid, jwk)) }
        guard !keepingPrevious else { return }
        _ = await collection.removeAll(except: [identifier])
        published.withLock { $0.removeAll { $0.kid != kid } }
    }

    /// 8 random bytes in base64url: a key id.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// A token's claims as jwt-kit reads and writes them: one JSON object, its times checked by the engine
/// against the server's clock (not the machine's, so that a test moves time instead of sleeping).
struct Claims: JWTPayload {
    var object: JSONObject

    init(_ object: JSONObject) { self.object = object }

    init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSON(from: decoder) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The claims are not a JSON object"))
        }
        self.object = object
    }

    func encode(to encoder: any Encoder) throws { try JSON.object(object).encode(to: encoder) }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
