public import Foundation

/// What a request returns, chosen by the type the caller asks for: the `@API` macro writes
/// `return try await client.result(of: request)` in every method, and Swift's overload resolution
/// picks the overload from the method's return type, so a typealias (`typealias Users = [User]`) or
/// a spelled-out `Optional<User>` works like the plain spelling.
///
/// ```swift
/// let users: [User] = try await client.result(of: RequestBuilder(.get, "/users"))
/// let maybe: User? = try await client.result(of: RequestBuilder(.get, "/users/7"))   // nil for 204/empty
/// ```
extension RestClient {
    /// Sends `request` and ignores a 2xx body.
    public func result(of request: RequestBuilder) async throws(RestError) {
        _ = try await send(request)
    }

    /// Sends `request` and returns the raw 2xx response.
    public func result(of request: RequestBuilder) async throws(RestError) -> RawResponse {
        try await send(request)
    }

    /// Sends `request` and returns the 2xx body's bytes.
    public func result(of request: RequestBuilder) async throws(RestError) -> Data {
        Data(try await send(request).body)
    }

    /// Sends `request` and saves the 2xx body to a file.
    public func result(of request: RequestBuilder) async throws(RestError) -> DownloadedFile {
        try await download(request)
    }

    /// Sends `request` and returns the 2xx response with its body to read as it arrives.
    public func result(of request: RequestBuilder) async throws(RestError) -> StreamedResponse {
        try await stream(request)
    }

    /// Sends `request` and returns the 2xx body's chunks as they arrive.
    public func result(of request: RequestBuilder) async throws(RestError) -> BodyStream {
        try await stream(request).body
    }

    /// Sends `request` and returns the 2xx body's lines as they arrive.
    public func result(of request: RequestBuilder) async throws(RestError) -> TextLines {
        try await stream(request).lines
    }

    /// Sends `request` and returns the 2xx body's Server-Sent Events as they arrive.
    public func result(of request: RequestBuilder) async throws(RestError) -> ServerSentEvents {
        try await stream(request).serverSentEvents
    }

    /// Sends `request` and returns the 2xx body's JSON lines, decoded, as they arrive.
    public func result<T: Decodable>(of request: RequestBuilder) async throws(RestError) -> JSONLines<T> {
        try await stream(request).jsonLines(of: T.self)
    }

    /// Sends `request` and decodes a 2xx body as `T`.
    ///
    /// Disfavored, so that for an optional, a `Response` or `Data` the overload made for it wins over
    /// decoding the whole type (`Optional` and `Data` are `Decodable` too).
    @_disfavoredOverload @inlinable
    public func result<T: Decodable>(of request: RequestBuilder) async throws(RestError) -> T {
        try await send(request, decoding: T.self)
    }

    /// Sends `request` and decodes a 2xx body as `T`, or returns `nil` for 204 or an empty body.
    public func result<T: Decodable>(of request: RequestBuilder) async throws(RestError) -> T? {
        try await sendOptional(request, decoding: T.self)
    }

    /// Sends `request` and returns the decoded body with the status and header fields.
    public func result<T: Decodable>(of request: RequestBuilder) async throws(RestError) -> Response<T> {
        try await sendForResponse(request, decoding: T.self)
    }

    /// Sends a conditional request; a 304 is ``ConditionalResponse/notModified(headerFields:)``.
    public func result<T: Decodable>(of request: RequestBuilder) async throws(RestError) -> ConditionalResponse<T> {
        try await sendConditional(request, decoding: T.self)
    }
}
