import Foundation
import FuzzSupport
import HTTPTypes
import HammockJSON
import HammockServer
import Synchronization

/// Credentials from a third party against a mock with a login: bearer tokens, raw `Authorization`
/// values, API keys, token-endpoint bodies (form and JSON), tokens in the query. For any input: never a
/// 5xx, and a protected route answers 200 only to a credential the server gave out (the token it issued
/// at start, the configured API key).
///
/// The signer is the fuzz target's own, so that no cryptography is built with AddressSanitizer: it
/// accepts exactly the tokens it signed. What is fuzzed is the engine's side: reading the header, the
/// token's shape and header, the claims, the switches, the token endpoint's parsing and grants.
@main
struct FuzzTarget {
    /// Signs by remembering: a token verifies only if this keyring made it.
    final class RememberingKeyring: AccessTokenKeyring, AccessTokenSigner {
        let algorithm = AuthSettings.SigningAlgorithm.es256
        let keyIDs = ["fuzz-key"]
        let jwks: JSON = ["keys": []]
        private let signed = Mutex<[String: JSONObject]>([:])

        func keyring(for algorithm: AuthSettings.SigningAlgorithm) async throws -> any AccessTokenKeyring { self }

        func sign(_ claims: JSONObject) async throws -> String {
            let header = Self.base64URL(Array(#"{"alg":"ES256","kid":"fuzz-key","typ":"JWT"}"#.utf8))
            let body = Self.base64URL(Array(JSON.object(claims).serializedString().utf8))
            let token = "\(header).\(body).\(Self.base64URL((0..<32).map { _ in UInt8.random(in: 0...255) }))"
            signed.withLock { $0[token] = claims }
            return token
        }

        func verify(_ token: String, keyID: String) async throws -> JSONObject {
            guard let claims = signed.withLock({ $0[token] }) else { throw CancellationError() }
            return claims
        }

        func rotate(keepingPrevious: Bool) async throws {}

        static func base64URL(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
    }

    static let apiKey = "k-fuzz-0001"

    /// The server, and the one token it gave out.
    static let setup: (server: MockServer, token: String) = Fuzzer.wait {
        let text = """
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "auth": {"users": [{"username": "ada", "password": "lovelace", "roles": ["admin"]}],
                      "clients": [{"id": "app", "secret": "s3cret"}],
                      "apiKeys": [{"key": "\(apiKey)", "user": "ada"}], "basic": true,
                      "protect": [{"resource": "people"}], "accessTokenLifetime": 315360000}}
            """
        let configuration = try! ServerConfiguration(parsing: Array(text.utf8), file: "fuzz.json")
        let server = try! await MockServer(configuration: configuration, store: MemoryStore(), tokenSigner: RememberingKeyring())
        let token = try! await server.accessToken(for: "ada")
        return (server, token)
    }

    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            guard let selector = bytes.first else { return 0 }
            let rest = Array(bytes.dropFirst())
            let text = String(decoding: rest, as: UTF8.self)
            let (server, token) = FuzzTarget.setup
            var request: MockRequest
            var valid = false
            switch selector % 6 {
            case 0:
                request = MockRequest(.get, "/people", headerFields: [.authorization: "Bearer " + text])
                valid = text.contains(token)
            case 1:
                request = MockRequest(.get, "/people", headerFields: [.authorization: text])
                // The real token or Ada's password may come with any spelling of the scheme around it.
                valid = text.contains(token) || text.contains(Data("ada:lovelace".utf8).base64EncodedString())
            case 2:
                request = MockRequest(.get, "/people", headerFields: [HTTPField.Name("X-API-Key")!: text])
                valid = text.contains(FuzzTarget.apiKey)
            case 3:
                request = MockRequest(
                    .post, "/auth/token", headerFields: [.contentType: "application/x-www-form-urlencoded"], body: rest)
            case 4:
                request = MockRequest(.post, "/auth/token", headerFields: [.contentType: "application/json"], body: rest)
            default:
                let query = String(decoding: rest.filter { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }, as: UTF8.self)
                request = MockRequest(.get, "/people?access_token=" + query)
            }
            let sent = request
            let response = Fuzzer.wait { await server.respond(to: sent) }
            Fuzzer.check(
                response.status.code < 500, "a \(response.status.code) for \(selector % 6) \(text.prefix(200).debugDescription)")
            if request.path == "/people" {
                Fuzzer.check(
                    response.status.code != 200 || valid,
                    "a protected route answered 200 to \(selector % 6) \(text.prefix(200).debugDescription)")
            }
            return 0
        }
    }
}
