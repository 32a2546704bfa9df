public import Foundation
public import HTTPTypes
public import HammockJSON
import HammockWire

/// A resource's data: the content the response pipeline produced, with the response's metadata.
///
/// ```swift
/// let user = profile.latestData?.typedContent(ifNone: User.empty)
/// let json = profile.latestData?.jsonContent ?? [:]
/// print(profile.latestData?.etag ?? "no validator")
/// ```
/// The content's type depends on the pipeline: bytes (`[UInt8]`) by default, a `String` for `text/*`,
/// `JSON` for JSON media types, and your model if you configure one.
public struct Entity: Sendable {
    /// The content after the response pipeline.
    public var content: any Sendable
    /// The media type without parameters, lowercased (`application/json`); `application/octet-stream`
    /// when the response named none.
    public var contentType: String
    /// The charset parameter of `Content-Type`, if any.
    public var charset: String?
    /// The response header fields.
    public var headerFields: HTTPFields
    /// When the data arrived, or was last confirmed by a 304.
    public var timestamp: ServiceInstant
    /// The bytes as they came over the wire (kept for the persistent cache and for decoding).
    public var bytes: [UInt8]

    /// An entity with `content`.
    public init(
        content: any Sendable, contentType: String = "application/octet-stream", charset: String? = nil,
        headerFields: HTTPFields = [:], timestamp: ServiceInstant = ServiceInstant(sinceStart: .zero), bytes: [UInt8] = []
    ) {
        self.content = content
        self.contentType = contentType
        self.charset = charset
        self.headerFields = headerFields
        self.timestamp = timestamp
        self.bytes = bytes
    }

    /// The `ETag` validator, sent back as `If-None-Match` on the next load.
    public var etag: String? { headerFields[.eTag] }

    /// The `Last-Modified` date as sent, sent back as `If-Modified-Since` on the next load.
    public var lastModified: String? { headerFields[.lastModified] }

    /// How long the server says this representation stays fresh from when it was made (RFC 9111
    /// §4.2.1): `Cache-Control: max-age`; else `Expires` minus `Date`; zero for `no-cache` and
    /// `no-store`, and for an `Expires` that is no date (`Expires: 0`, the classic "do not cache").
    /// `nil` when it says nothing (the configured expiration time applies). An `Expires` without a `Date`
    /// counts from arrival: see ``remainingFreshness(receivedAt:)``.
    public var freshnessLifetime: Duration? { lifetime(receivedAt: nil) }

    /// How much of its freshness the representation had left when it arrived at `receivedAt` (RFC 9111
    /// §4.2.3): the lifetime less the age it already had, `Age` (the time it waited in a cache on the
    /// way) or the time since its `Date`, whichever is more; never below zero. `nil` when the server
    /// says nothing. A response that waited 50 of its 60 seconds in a CDN is fresh for 10 more.
    public func remainingFreshness(receivedAt: Date) -> Duration? {
        guard let lifetime = lifetime(receivedAt: receivedAt) else { return nil }
        let remaining = lifetime - initialAge(receivedAt: receivedAt)
        return remaining > .zero ? remaining : .zero
    }

    /// The age the representation had when it arrived (RFC 9111 §4.2.3, `corrected_initial_age`
    /// without the request's own travel time): the greater of `Age` and the time from its `Date` to
    /// `receivedAt`.
    public func initialAge(receivedAt: Date) -> Duration {
        var age = Duration.zero
        if let text = headerFields[.age]?.trimmingCharacters(in: .whitespaces), text.count <= 10, let seconds = Int64(text),
            seconds >= 0
        {
            age = .seconds(seconds)
        }
        if let dated = headerFields[.date].flatMap({ HTTPDate.parse($0, now: receivedAt) }) {
            age = max(age, Self.duration(from: dated, to: receivedAt))
        }
        return age
    }

    private func lifetime(receivedAt: Date?) -> Duration? {
        if let cacheControl = headerFields[.cacheControl] {
            var lifetime: Duration?
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                }
                switch parts.first {
                case "no-cache", "no-store": return .zero
                case "max-age":
                    let digits = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
                    if digits.count <= 10, let seconds = Int64(digits), seconds >= 0 { lifetime = .seconds(seconds) }
                default: break
                }
            }
            if let lifetime { return lifetime }
        }
        guard let expires = headerFields[.expires] else { return nil }
        // A date that does not parse is already past (§5.3): `Expires: 0`, `-1`.
        let now = receivedAt ?? Date(timeIntervalSince1970: 0)
        guard let expiry = HTTPDate.parse(expires, now: now) else { return .zero }
        guard let origin = headerFields[.date].flatMap({ HTTPDate.parse($0, now: now) }) ?? receivedAt else {
            return nil
        }
        return Self.duration(from: origin, to: expiry)
    }

    /// `to` − `from`, never below zero, in whole milliseconds (and at most a year, which no cache keeps).
    static func duration(from: Date, to: Date) -> Duration {
        let seconds = to.timeIntervalSince(from)
        guard seconds.isFinite, seconds > 0 else { return .zero }
        return .milliseconds(Int64(min(seconds, 365 * 86_400) * 1000))
    }

    /// Whether the server forbids storing this response (`Cache-Control: no-store`).
    public var isNoStore: Bool {
        headerFields[.cacheControl].map { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "no-store" }
        } ?? false
    }

    /// The value of a header field, by name (case-insensitive).
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headerFields[$0] }
    }

    /// The content as `T`, or `nil` if the pipeline produced something else.
    public func typedContent<T>(as type: T.Type = T.self) -> T? { content as? T }

    /// The content as `T`, or `fallback` if there is none of that type: handy for clearing a UI.
    public func typedContent<T>(ifNone fallback: @autoclosure () -> T) -> T { (content as? T) ?? fallback() }

    /// The content as JSON, if the pipeline parsed it.
    public var jsonContent: JSON? { content as? JSON }

    /// The content as text: the pipeline's `String`, or the bytes decoded as UTF-8.
    public var text: String? {
        if let text = content as? String { return text }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension Optional where Wrapped == Entity {
    /// The content as `T`, or `fallback` when there is no data or it is of another type.
    ///
    /// ```swift
    /// render(profile.latestData.typedContent(ifNone: User.empty))
    /// ```
    public func typedContent<T>(ifNone fallback: @autoclosure () -> T) -> T {
        (self?.content as? T) ?? fallback()
    }
}
