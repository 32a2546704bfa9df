public import HammockJSON
import HammockWire

/// What signs and checks a mock's access tokens, for a server with an `auth` section.
///
/// The engine holds no cryptography, so that an app's tests that use the mock in process build none
/// (scripts/check-consumer): the `HammockJWT` product's `JWTAccessTokens` signs JWTs with jwt-kit, and
/// `hammock serve` and `HammockServerTesting` pass it for you. Pass it yourself elsewhere:
///
/// ```swift
/// import HammockJWT
/// let server = try await MockServer(configuration: configuration, store: MemoryStore(), tokenSigner: JWTAccessTokens())
/// ```
public protocol AccessTokenSigner: Sendable {
    /// A new keyring signing with `algorithm`, with one key made (or, for HS256, taken from its secret).
    func keyring(for algorithm: AuthSettings.SigningAlgorithm) async throws -> any AccessTokenKeyring
}

/// The keys that sign a server's tokens and check them: the one in use and those it replaced.
///
/// The engine reads a token's header before asking the keyring (length, three parts, `alg` the keyring's,
/// `kid` one of ``keyIDs``), so a keyring only signs and checks signatures.
public protocol AccessTokenKeyring: Sendable {
    /// The algorithm every key signs with.
    var algorithm: AuthSettings.SigningAlgorithm { get }
    /// The ids of the keys that verify, the one that signs last.
    var keyIDs: [String] { get }
    /// The JWKS (RFC 7517 §5): the public halves of the keys, newest first; no keys for a shared secret.
    var jwks: JSON { get }
    /// `claims` as a compact JWS signed with the key in use, its header naming the key (`kid`).
    func sign(_ claims: JSONObject) async throws -> String
    /// The claims of `token` if the key named `keyID` signed it; throws otherwise. Times are the engine's
    /// to check.
    func verify(_ token: String, keyID: String) async throws -> JSONObject
    /// Signs with a new key from now on; without `keepingPrevious` the others are forgotten (tokens they
    /// signed stop verifying and leave the JWKS).
    func rotate(keepingPrevious: Bool) async throws
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

/// Reading tokens before any key is asked: the checks that hold for every keyring.
enum CompactToken {
    /// Tokens longer than this are refused unread: a signed token of the server's is under 2 KiB with
    /// every claim a test gives (RS256's signature is 342 characters).
    static let maximumLength = 8192

    /// The claims the server sets; a user's `claims` may not name them.
    static let registeredClaims: Set<String> = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "scope", "roles", "client_id"]

    /// The key id of `token` if its shape and header fit `keyring`.
    ///
    /// Why the header is read here: a keyring picks its key by `kid` and verifies with that key's own
    /// algorithm, so `alg: none` or an HS256 token signed with the public key already fail there;
    /// reading `alg` first turns that into a reason a developer can act on, whatever the keyring.
    static func keyID(of token: String, for keyring: any AccessTokenKeyring) throws(TokenRejection) -> String {
        guard token.utf8.count <= maximumLength else {
            throw TokenRejection("The access token is longer than \(maximumLength) bytes")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            case .object(let header)? = try? JSON(parsing: headerBytes)
        else { throw TokenRejection("The access token is not a JWT (three base64url parts, the first a JSON header)") }
        let algorithm = keyring.algorithm.name
        guard case .string(let alg)? = header["alg"], alg == algorithm else {
            let given = header["alg"]?.stringValue.map { "'\($0.prefix(20))'" } ?? "no algorithm"
            throw TokenRejection("The access token is signed with \(given); this server signs with \(algorithm)")
        }
        guard case .string(let kid)? = header["kid"], keyring.keyIDs.contains(kid) else {
            throw TokenRejection("The access token names no key of this server's (kid)")
        }
        return kid
    }

    /// A random base64url string of `count` bytes.
    static func randomID(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
