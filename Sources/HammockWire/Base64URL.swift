import Foundation

/// Base64url without padding (RFC 4648 §5, as JWTs write it: RFC 7515 §2), in one place for the mock's
/// tokens, their signer and the client that reads a token's expiry.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = WebSocketHandshake.base64(bytes)
        while text.hasSuffix("=") { text.removeLast() }
        return text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// The bytes of `text`, padded or not; `nil` for anything that is not base64url.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
