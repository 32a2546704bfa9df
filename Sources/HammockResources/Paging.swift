public import Foundation
import HammockClient
public import HammockJSON
import HammockWire

/// How a list API pages: where one page's items are, and which URL answers the next page.
///
/// Three forms cover most APIs, and the mock server answers all three:
/// ```swift
/// .link()                                              // GitHub: Link: <…?page=3>; rel="next"
/// .pageNumber(parameter: "page", total: "total")      // ?page=2, until the total is reached
/// .cursor(parameter: "cursor", nextCursor: "next_cursor", items: "data")   // {"data": […], "next_cursor": "…"}
/// ```
/// Anything else is one closure: ``init(_:)`` gets each page's answer and says where its items are and
/// which URL comes next.
public struct Paging: Sendable {
    /// One page's answer, as the reader of a ``Paging`` sees it.
    public struct Answer: Sendable {
        /// The page's data.
        public let entity: Entity
        /// The URL that answered it.
        public let url: URL
        /// Which page it is: 0 for the first.
        public let index: Int
        /// How many items the pages before it held.
        public let itemsBefore: Int

        /// An answer: `entity` from `url`, page `index` (from 0) after `itemsBefore` items.
        public init(entity: Entity, url: URL, index: Int = 0, itemsBefore: Int = 0) {
            self.entity = entity
            self.url = url
            self.index = index
            self.itemsBefore = itemsBefore
        }

        /// The answer as JSON, or a ``PagingError`` saying it is not.
        public func json() throws(PagingError) -> JSON {
            if let json = entity.jsonContent { return json }
            do {
                return try JSON(parsing: entity.bytes)
            } catch {
                throw PagingError("\(url.absoluteString) did not answer JSON: \(error)")
            }
        }

        /// The member at a dotted `path` of the answer (`"data"`, `"response_metadata.next_cursor"`).
        public func member(_ path: String) throws(PagingError) -> JSON? {
            var value: JSON? = try json()
            for name in path.split(separator: ".") { value = value?[String(name)] }
            return value
        }

        /// The URL of the page after it, with the query item `name` set to `value`.
        public func url(setting name: String, to value: String) -> URL {
            ResourceURL.settingParameter(name, to: value, in: url)
        }
    }

    /// Where a page's items are and what follows it.
    public struct Cut: Sendable {
        /// The items as a JSON array; `nil` when the whole answer is the array (decoded from its bytes).
        public var items: JSON?
        /// The next page's URL; `nil` on the last page.
        public var next: URL?

        /// A page's cut.
        public init(items: JSON? = nil, next: URL?) {
            self.items = items
            self.next = next
        }
    }

    let read: @Sendable (Answer) throws -> Cut

    /// A paging that reads each answer with `read`.
    ///
    /// ```swift
    /// let paging = Paging { answer in
    ///     Paging.Cut(items: try answer.member("results"), next: try answer.member("next")?.stringValue
    ///         .flatMap { URL(string: PercentEncoding.encodeURLText($0), relativeTo: answer.url) })
    /// }
    /// ```
    public init(_ read: @escaping @Sendable (Answer) throws -> Cut) {
        self.read = read
    }

    /// Reads one answer: where its items are and which URL comes next (what a ``PagedResource`` asks of
    /// each page; a custom paging can be tested with it).
    public func cut(_ answer: Answer) throws -> Cut { try read(answer) }

    /// Pages named by a `Link` header's `rel="next"` (RFC 8288), resolved against the page's URL; the last
    /// page has none. The answer is the array of items, or holds it under `items`.
    public static func link(items: String? = nil) -> Paging {
        Paging { answer in
            let next = answer.entity.header("Link").flatMap { LinkHeader.target(of: "next", in: $0) }
                .flatMap { URL(string: PercentEncoding.encodeURLText($0), relativeTo: answer.url)?.absoluteURL }
            return Cut(items: try items.map { path throws(PagingError) in try answer.requiredArray(at: path) }, next: next)
        }
    }

    /// Numbered pages: the next page is the query item `parameter` plus one (a first URL without it is
    /// page 1). There is a next page while the answer held items and, where the API says, while fewer
    /// than `total` (a member, else the `X-Total-Count` header) have been seen, or while `hasMore` (a
    /// boolean member) is true.
    public static func pageNumber(
        parameter: String = "_page", items: String? = nil, total: String? = nil, hasMore: String? = nil
    ) -> Paging {
        Paging { answer in
            let itemsJSON = try items.map { path throws(PagingError) in try answer.requiredArray(at: path) }
            let count = try (itemsJSON ?? answer.json()).arrayValue?.count ?? 0
            let current =
                URLComponents(url: answer.url, resolvingAgainstBaseURL: true)?.queryItems?
                .first { $0.name == parameter }?.value.flatMap { Int($0) } ?? 1
            var more = count > 0
            if let hasMore, let flag = try answer.member(hasMore)?.boolValue { more = more && flag }
            let stated = try total.flatMap { path throws(PagingError) in try answer.member(path)?.intValue }
            if let known = stated ?? answer.entity.header("X-Total-Count").flatMap({ Int($0) }) {
                more = more && answer.itemsBefore + count < known
            }
            guard more, current < Int.max else { return Cut(items: itemsJSON, next: nil) }
            return Cut(items: itemsJSON, next: answer.url(setting: parameter, to: String(current + 1)))
        }
    }

    /// Pages by an opaque cursor: the next page is the query item `parameter` set to the cursor the
    /// answer gave, from the member `nextCursor` (a dotted path) if named, else the `X-Next-Cursor`
    /// header. A missing, `null` or empty cursor ends the list.
    public static func cursor(parameter: String = "_cursor", nextCursor: String? = nil, items: String? = nil) -> Paging {
        Paging { answer in
            let itemsJSON = try items.map { path throws(PagingError) in try answer.requiredArray(at: path) }
            let cursor =
                if let nextCursor { try answer.member(nextCursor)?.stringValue } else { answer.entity.header("X-Next-Cursor") }
            guard let cursor, !cursor.isEmpty else { return Cut(items: itemsJSON, next: nil) }
            return Cut(items: itemsJSON, next: answer.url(setting: parameter, to: cursor))
        }
    }
}

extension Paging.Answer {
    /// The array at `path`, or a ``PagingError`` saying what is there instead.
    func requiredArray(at path: String) throws(PagingError) -> JSON {
        guard let value = try member(path), value.arrayValue != nil else {
            throw PagingError("\(url.absoluteString) has no array of items at \"\(path)\"")
        }
        return value
    }
}

/// A page's answer is not what its ``Paging`` reads: not JSON, or no items where it says.
public struct PagingError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the page's URL.
    public let description: String

    /// A paging error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Reads an RFC 8288 `Link` header.
enum LinkHeader {
    /// The target of the first link whose `rel` (one of its space-separated values, any case) is `relation`.
    static func target(of relation: String, in header: String) -> String? {
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { return nil }
            let target = rest[rest.index(after: open)..<close]
            // The parameters run to the next link: a comma outside quotes.
            var end = rest.endIndex
            var quoted = false
            var index = rest.index(after: close)
            while index < rest.endIndex {
                let character = rest[index]
                if character == "\"" {
                    quoted.toggle()
                } else if character == "," && !quoted {
                    end = index
                    break
                }
                index = rest.index(after: index)
            }
            for parameter in rest[rest.index(after: close)..<end].split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel" else { continue }
                let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                if value.lowercased().split(separator: " ").contains(Substring(relation.lowercased())) { return String(target) }
            }
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
        }
        return nil
    }
}
