public import Foundation
import HammockJSON
import HammockWire

/// What a sign-in gives an app: the access token it sends, the refresh token that renews it, and when the
/// access token stops working.
public struct AuthTokens: Sendable, Hashable, Codable {
    /// Sent as `Authorization: Bearer …`.
    public var accessToken: String
    /// Renews ``accessToken``; `nil` when the server gave none (client credentials).
    public var refreshToken: String?
    /// When ``accessToken`` expires, if known: from `expires_in` when it was issued, or the token's own
    /// `exp` claim.
    public var expiresAt: Date?

    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt ?? Self.expiry(ofJWT: accessToken)
    }

    /// Tokens from a token endpoint's answer (RFC 6749 §5.1), received at `now`.
    /// - Throws: ``AuthenticationError`` when the body is not such an answer.
    public init(tokenResponse body: [UInt8], receivedAt now: Date) throws(AuthenticationError) {
        guard case .object(let object)? = try? JSON(parsing: body), case .string(let access)? = object["access_token"],
            !access.isEmpty
        else {
            throw AuthenticationError(.malformedTokenResponse, detail: "The token endpoint's answer has no access_token")
        }
        if case .string(let type)? = object["token_type"], type.lowercased() != "bearer" {
            throw AuthenticationError(.malformedTokenResponse, detail: "The token type is '\(type.prefix(40))', not Bearer")
        }
        var expiry: Date?
        if let seconds = object["expires_in"]?.doubleValue, seconds.isFinite, seconds >= 0 {
            expiry = now.addingTimeInterval(seconds)
        }
        self.init(accessToken: access, refreshToken: object["refresh_token"]?.stringValue, expiresAt: expiry)
    }

    /// The `exp` claim of a JWT, read without checking the signature (the server checks it; the app only
    /// wants to know when to refresh). `nil` for a token that is not a JWT or has no `exp`.
    static func expiry(ofJWT token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count <= 16_384, let bytes = Base64URL.decode(parts[1]),
            case .object(let claims)? = try? JSON(parsing: bytes),
            let exp = claims["exp"]?.doubleValue, exp.isFinite, abs(exp) < 1e11
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}

/// Why an authenticated request failed without the server's answer: a typed error every waiting request
/// gets alike.
public struct AuthenticationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The token endpoint refused the refresh token (`invalid_grant` and the like): the session is
        /// over, and the authenticator has signed the user out.
        case refreshRejected
        /// The refresh could not reach the token endpoint, or it answered 5xx: the session may still be
        /// good, so the tokens are kept and a later request tries again.
        case refreshFailed
        /// The tokens have no refresh token, and the access token is expired or refused.
        case noRefreshToken
        /// The token endpoint answered something that is not tokens.
        case malformedTokenResponse
        /// The user signed out while the request waited for a refresh.
        case signedOut
        /// The token endpoint refused a sign-in (a wrong password, an unknown client).
        case signInRejected
    }

    public var reason: Reason
    /// What happened, for a developer.
    public var detail: String
    /// The OAuth error the token endpoint gave (`invalid_grant`), if it gave one.
    public var oauthError: String?
    /// The token endpoint's status, if it answered.
    public var status: Int?

    public init(_ reason: Reason, detail: String, oauthError: String? = nil, status: Int? = nil) {
        self.reason = reason
        self.detail = detail
        self.oauthError = oauthError
        self.status = status
    }

    public var description: String {
        var text = "\(reason): \(detail)"
        if let status { text += " (status \(status)" + (oauthError.map { ", \($0)" } ?? "") + ")" }
        return text
    }
}
