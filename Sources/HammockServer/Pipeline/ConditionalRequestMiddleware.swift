import Foundation
import HTTPTypes
import HammockStore
import HammockWire

/// Validators on successful `GET` and `HEAD` responses, and 304 Not Modified for requests that already
/// hold the current representation (RFC 9110 §8.8 and §13).
///
/// Every such response gets a strong `ETag` of its bytes (unless it has one, or is given as it was: a
/// proxied or `verbatim` one, ``MatchedRoute/answersAsGiven``). `Last-Modified` comes
/// from the handler: resource routes set it from the dates the store keeps (`MockStore.lastChange(of:now:marking:)`).
struct ConditionalRequestMiddleware: OutcomeStep {
    let now: @Sendable () -> Date

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard request.method == .get || request.method == .head else { return outcome }
        return mapResponse(outcome) { response in validate(&response, for: request) }
    }

    func validate(_ response: inout MockResponse, for request: MockRequest) {
        // A streamed body is not known in advance, so it has no tag to compare.
        guard response.status == .ok, response.stream == nil else { return }
        let tag: String
        if let given = response.headerFields[.eTag] {
            tag = given
        } else {
            // A proxied or recorded answer is the backend's: a tag of the mock's would be one the real
            // backend never sends. (Asked only here and before a 304, not for every request.)
            if isAsGiven(request) { return }
            tag = Self.entityTag(of: response.body)
            response.headerFields.append(HTTPField(name: .eTag, value: tag))
        }
        let notModified: Bool
        if let ifNoneMatch = request.headerFields[.ifNoneMatch] {
            // `If-None-Match` wins over `If-Modified-Since` when both are sent.
            notModified = Self.matches(ifNoneMatch, tag)
        } else if let ifModifiedSince = request.headerFields[.ifModifiedSince],
            let lastModified = response.headerFields[.lastModified]
        {
            let now = self.now()
            if let since = HTTPDate.parse(ifModifiedSince, now: now), let modified = HTTPDate.parse(lastModified, now: now) {
                notModified = modified <= since
            } else {
                notModified = false
            }
        } else {
            notModified = false
        }
        // The backend was asked with the same fields; its 200 stands (and a recording of it).
        guard notModified, !isAsGiven(request) else { return }
        response.status = .notModified
        response.body = []
        response.headerFields[.contentLength] = nil
        response.headerFields[.contentType] = nil
    }

    func isAsGiven(_ request: MockRequest) -> Bool { request.context?.route?.answersAsGiven ?? false }

    /// A strong entity tag of the representation's bytes: a 64-bit multiply-xorshift hash taken eight
    /// bytes at a time (fast on long lists; an ETag needs spread, not cryptographic strength), written as
    /// its top 52 bits in hex.
    static func entityTag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(body.count)
        body.withUnsafeBytes { raw in
            var index = 0
            while index + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
                hash ^= hash >> 29
                index += 8
            }
            while index < raw.count {
                hash = (hash ^ UInt64(raw[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
        }
        hash ^= hash >> 32
        // 13 hex digits (52 bits) and the quotes make 15 bytes, which Swift keeps inline: no allocation.
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 15) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            var rest = hash >> 12
            for index in stride(from: 13, through: 1, by: -1) {
                buffer[index] = digits.utf8Start[Int(rest & 0xF)]
                rest >>= 4
            }
            buffer[14] = UInt8(ascii: "\"")
            return 15
        }
    }

    /// Whether a list of tags (or `*`) names `tag` (RFC 9110 §8.8.3.2): weakly, as `If-None-Match`
    /// compares (`W/` ignored), or strongly, as `If-Match` does (a weak tag never matches).
    static func matches(_ header: String, _ tag: String, strongly: Bool = false) -> Bool {
        if strongly, tag.hasPrefix("W/") { return false }
        for candidate in header.split(separator: ",") {
            var value = candidate.trimmingCharacters(in: .whitespaces)
            if value == "*" { return true }
            if value.hasPrefix("W/") {
                if strongly { continue }
                value.removeFirst(2)
            }
            if value == tag { return true }
        }
        return false
    }
}
