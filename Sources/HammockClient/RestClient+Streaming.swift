public import Foundation
public import HTTPTypes

/// A 2xx response whose body is read as it arrives (``RestClient/stream(_:)``).
///
/// ```swift
/// let response = try await client.stream(RequestBuilder(.get, "/stream/20"))
/// for try await line in response.lines { print(line) }
/// ```
/// The body is read once, whichever view reads it. Errors while reading are ``RestError``s with the
/// request and status attached: `.transport`, `.timedOut` or `.cancelled` for the transfer,
/// `.decoding` for a line or event that cannot be read.
public struct StreamedResponse: Sendable {
    /// The status (2xx).
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headerFields: HTTPFields
    /// The raw chunks, as they arrive.
    public var body: BodyStream { raw.mapError(mapError) }
    let raw: BodyStream
    let mapError: @Sendable (any Error) -> any Error

    /// The body's lines as text (``BodyStream/lines(maximumLength:)``).
    public var lines: TextLines { TextLines(body: raw, maximumLength: 1 << 20, mapError: mapError) }

    /// The body's lines as text, each at most `maximumLength` bytes.
    public func lines(maximumLength: Int) -> TextLines {
        TextLines(body: raw, maximumLength: maximumLength, mapError: mapError)
    }

    /// The body as Server-Sent Events (``BodyStream/serverSentEvents(maximumEventSize:)``).
    public var serverSentEvents: ServerSentEvents {
        ServerSentEvents(body: raw, maximumEventSize: 1 << 20, mapError: mapError)
    }

    /// The body as newline-delimited JSON, each line a `T` (decoded with the client's decoder).
    public func jsonLines<T: Decodable>(of type: T.Type = T.self) -> JSONLines<T> {
        JSONLines(lines: lines, makeDecoder: makeDecoder)
    }

    let makeDecoder: @Sendable () -> JSONDecoder
}

extension RestClient {
    /// Sends `request` and returns once a 2xx head has arrived, with the body to read as it arrives.
    ///
    /// ```swift
    /// let events = try await client.stream(RequestBuilder(.get, "/events")).serverSentEvents
    /// for try await event in events where event.event == "update" { ... }
    /// ```
    /// The request's ``RequestBuilder/timeout`` (or the transport's) bounds the wait for the head,
    /// not the body: end a body that lasts for ever by cancelling the task that reads it. A non-2xx
    /// answer throws `.unacceptableStatus` with its first mebibyte as the error's body.
    /// - Throws: ``RestError`` as ``send(_:acceptingAnyStatus:)`` does.
    public func stream(_ request: RequestBuilder) async throws(RestError) -> StreamedResponse {
        let (head, body, file) = try prepare(request)
        let url = request.describeURL(baseURL: baseURL)
        func failure(_ reason: RestError.Reason) -> RestError {
            var error = RestError(reason, method: request.method, url: url)
            error.request = head
            return error
        }
        let response: HTTPResponse
        let stream: BodyStream
        do {
            try Task.checkCancellation()
            let requestBody = file ?? body.map(BodyStream.init)
            if let timeout = request.timeout {
                (response, stream) = try await Self.within(timeout, on: clock) { [intercepted] in
                    try await intercepted.stream(head, body: requestBody)
                }
            } else {
                (response, stream) = try await intercepted.stream(head, body: requestBody)
            }
        } catch {
            throw Self.failure(for: error, failure)
        }
        Self.reportSent(body)
        guard (200...299).contains(response.status.code) else {
            let excerpt = try? await InterceptedTransport.prefix(of: stream, upTo: InterceptedTransport.streamedErrorBodyLimit)
            var error = RestError(
                .unacceptableStatus, method: request.method, url: url, status: response.status,
                headerFields: response.headerFields, body: excerpt ?? [])
            error.request = head
            throw error
        }
        if !writeObservers.isEmpty, ClientWrite.isWrite(request.method) {
            await tell(writeObservers, of: request, head: head, status: response.status)
        }
        let method = request.method
        let status = response.status
        let fields = response.headerFields
        return StreamedResponse(
            status: status, headerFields: fields, raw: stream,
            mapError: { error in
                func failure(_ reason: RestError.Reason) -> RestError {
                    var failure = RestError(reason, method: method, url: url, status: status, headerFields: fields, body: nil)
                    failure.request = head
                    return failure
                }
                switch error {
                case let error as JSONLineError: return failure(.decoding(error))
                case BodyStreamError.lineTooLong: return failure(.decoding(error))
                default: return Self.failure(for: error, failure)
                }
            },
            makeDecoder: makeDecoder)
    }
}
