public import Foundation
public import HTTPTypes
import HammockJSON
import HammockWire

/// An OAuth 2.0 token endpoint (RFC 6749): signs in with a password, gets a client's own token, and
/// renews tokens with a refresh token. What an ``Authenticator`` refreshes through.
///
/// ```swift
/// let endpoint = OAuthTokenEndpoint(url: URL(string: "https://api.example.com/auth/token")!, clientID: "ios-app")
/// let tokens = try await endpoint.signIn(username: "ada", password: password)
/// ```
/// Requests go straight to `transport`, not through a client's interceptors (an authenticator among
/// them would wait on itself).
public struct OAuthTokenEndpoint: Sendable {
    public let url: URL
    /// The app's client id, sent with every grant when set.
    public let clientID: String?
    /// The client's secret, sent by `Authorization: Basic` (RFC 6749 §2.3.1); `nil` for a public client.
    public let clientSecret: String?
    let transport: any HTTPTransport
    let now: @Sendable () -> Date

    /// An endpoint at `url` reached through `transport`; `now` dates the tokens' expiry.
    public init(
        url: URL, clientID: String? = nil, clientSecret: String? = nil, transport: any HTTPTransport = URLSessionTransport(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.url = url
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.transport = transport
        self.now = now
    }

    /// Signs in with the password grant (RFC 6749 §4.3).
    /// - Throws: ``AuthenticationError`` with reason `.signInRejected` for a wrong password.
    public func signIn(username: String, password: String, scope: String? = nil) async throws(AuthenticationError) -> AuthTokens {
        var parameters = [("grant_type", "password"), ("username", username), ("password", password)]
        if let scope { parameters.append(("scope", scope)) }
        return try await request(parameters, refused: .signInRejected)
    }

    /// Gets a token for the client itself (RFC 6749 §4.4).
    public func clientCredentials(scope: String? = nil) async throws(AuthenticationError) -> AuthTokens {
        var parameters = [("grant_type", "client_credentials")]
        if let scope { parameters.append(("scope", scope)) }
        return try await request(parameters, refused: .signInRejected)
    }

    /// Renews `tokens` with their refresh token (RFC 6749 §6). A server that does not rotate refresh tokens
    /// leaves the old one in force, and it is kept.
    /// - Throws: ``AuthenticationError``: `.refreshRejected` when the server refuses the refresh token (the
    ///   session is over), `.refreshFailed` when it could not be asked or failed (5xx).
    public func refresh(_ tokens: AuthTokens) async throws(AuthenticationError) -> AuthTokens {
        guard let refreshToken = tokens.refreshToken else {
            throw AuthenticationError(.noRefreshToken, detail: "The tokens have no refresh token")
        }
        var renewed = try await request(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], refused: .refreshRejected)
        if renewed.refreshToken == nil { renewed.refreshToken = refreshToken }
        return renewed
    }

    func request(
        _ parameters: [(String, String)], refused: AuthenticationError.Reason
    ) async throws(AuthenticationError) -> AuthTokens {
        var all = parameters
        if let clientID, clientSecret == nil { all.append(("client_id", clientID)) }
        let body = all.map { "\(Self.formEncoded($0.0))=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        var head = HTTPRequest(method: .post, url: url)
        head.headerFields[.contentType] = "application/x-www-form-urlencoded"
        head.headerFields[.accept] = "application/json"
        if let clientID, let clientSecret {
            let pair = "\(Self.formEncoded(clientID)):\(Self.formEncoded(clientSecret))"
            head.headerFields[.authorization] = "Basic " + Data(pair.utf8).base64EncodedString()
        }
        let response: HTTPResponse
        let responseBody: [UInt8]
        do {
            (response, responseBody) = try await transport.send(head, body: Array(body.utf8))
        } catch {
            throw AuthenticationError(.refreshFailed, detail: "The token endpoint could not be reached: \(error)")
        }
        switch response.status.code {
        case 200...299:
            return try AuthTokens(tokenResponse: responseBody, receivedAt: now())
        case 400...499:
            let object = (try? JSON(parsing: responseBody))?.objectValue
            let code = object?["error"]?.stringValue
            let description = object?["error_description"]?.stringValue
            throw AuthenticationError(
                refused, detail: description ?? "The token endpoint refused the grant", oauthError: code,
                status: response.status.code)
        default:
            throw AuthenticationError(
                .refreshFailed, detail: "The token endpoint answered \(response.status.code)", status: response.status.code)
        }
    }

    /// `application/x-www-form-urlencoded` (WHATWG): unreserved characters as they are, a space as `+`,
    /// every other byte as `%XX`.
    static func formEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "*"):
                result.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: " "):
                result.append("+")
            default:
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
