import HammockWire

/// The `_cursor` of a list page: opaque to clients, a position in the query's order to the server.
///
/// A cursor is base64url (no padding) of `hammock:<position>`, so a client that treats it as a token
/// (as it must) never sees a number to do arithmetic on, and one that was not made here is refused
/// with a 400 rather than read as some page. It moves like `_start` does: a record created or deleted
/// before it shifts the next page by one, as offset pages of real APIs do; the test of a client's cursor
/// handling is that it sends back what it was given, which this keeps honest.
///
/// ```swift
/// let next = ListCursor.token(for: 20)     // "aGFtbW9jazoyMA"
/// ListCursor.position(of: next)            // 20
/// ```
package enum ListCursor {
    private static let prefix = "hammock:"

    /// The cursor of the page that starts at `position`.
    package static func token(for position: Int) -> String {
        Base64URL.encode(Array((prefix + String(position)).utf8))
    }

    /// The position a cursor made by ``token(for:)`` stands for; `nil` for anything else.
    package static func position(of token: String) -> Int? {
        // 64 characters hold any `Int` this makes; a longer value is refused before it is decoded.
        guard token.utf8.count <= 64 else { return nil }
        guard let bytes = Base64URL.decode(token), let text = String(validating: bytes, as: UTF8.self),
            text.hasPrefix(prefix), let position = Int(text.dropFirst(prefix.count)), position >= 0
        else { return nil }
        return position
    }
}
