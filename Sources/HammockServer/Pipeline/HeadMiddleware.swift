import HTTPTypes

/// `HEAD` is answered like `GET` without the body: handlers produce the full representation (so its
/// `ETag` is the `GET`'s), and this takes the body off, keeping its length in `Content-Length`.
struct HeadMiddleware: OutcomeStep {
    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        guard request.method == .head else { return outcome }
        return mapResponse(outcome) { response in
            // A streamed body's length is known only when it says so (a file).
            if let stream = response.stream {
                if let length = stream.length { response.headerFields[.contentLength] = String(length) }
            } else if response.body.isEmpty, let declared = response.headerFields[.contentLength], Self.isLength(declared) {
                // An answer made for HEAD itself (a stub recorded from a backend's HEAD) says the length a GET
                // would bring: kept, where its empty body would say 0.
            } else {
                response.headerFields[.contentLength] = String(response.body.count)
            }
            response.body = []
            response.stream = nil
        }
    }

    /// Whether `value` is a `Content-Length` (RFC 9110 §8.6: digits only, so no sign or space) that fits.
    static func isLength(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } && UInt64(value) != nil
    }
}
