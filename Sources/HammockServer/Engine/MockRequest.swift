public import HTTPTypes
public import HammockJSON

/// A request as the mock server sees it, whether it came over a socket or was handed in directly.
///
/// ```swift
/// let response = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
/// ```
public struct MockRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// The percent-encoded path, without the query.
    public var path: String
    /// The query string after `?`, if any.
    public var query: String?
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body bytes.
    public var body: [UInt8]
    /// The body as it arrives, in place of ``body`` (which is then empty): set by the HTTP transport for
    /// a route that takes streamed bodies (``MockEndpoint/takesStreamedBody``) when the body is larger
    /// than the server's body limit; `nil` otherwise.
    public package(set) var bodyStream: RequestBodyStream?
    /// Its number, arrival, peer and (once routed) route; the server gives one to every request.
    public package(set) var context: MockRequestContext?
    /// Set by an HTTP transport that refused the request before it reached the engine (a body over the
    /// limit, a request that could not be parsed): the router answers with the problem, and the rest of
    /// the pipeline treats the answer like any other.
    package var rejection: Rejection?
    /// The settings in force when the server took the request in (``MockServer/respond(to:)``): its
    /// chain, faults and routes of your own all come from this one value.
    var runtime: ServerRuntime?
    /// Whether the API document the server checks requests against describes this request: its query is
    /// then the document's, and a `_` parameter the server does not know is ignored, not refused as a typo.
    public package(set) var isDocumented = false
    /// Whose records the request may reach, when an owner rule of the login holds the caller to their own.
    var ownerScope: OwnerScope?

    /// Creates a request; a `?` in `target` starts the query.
    public init(_ method: HTTPRequest.Method, _ target: String, headerFields: HTTPFields = [:], body: [UInt8] = []) {
        self.method = method
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.headerFields = headerFields
        self.body = body
    }
}

extension MockRequest {
    /// Why a transport refused a request, for ``MockServer/respond(to:rejectedWith:)``. A class, so that
    /// the request every middleware passes on stays small: only refused requests carry one.
    package final class Rejection: Sendable {
        /// The answer.
        package let problem: HTTPProblem
        /// The request could not be read at all; its method and path are placeholders.
        package let isUnreadable: Bool

        package init(problem: HTTPProblem, isUnreadable: Bool) {
            self.problem = problem
            self.isUnreadable = isUnreadable
        }
    }
}

extension MockRequest {
    /// The body parsed as JSON.
    public func json() throws(JSONParsingError) -> JSON { try JSON(parsing: body) }

    /// Creates a request with a JSON body and `Content-Type: application/json`.
    public init(_ method: HTTPRequest.Method, _ target: String, headerFields: HTTPFields = [:], json: JSON) {
        var fields = headerFields
        fields[.contentType] = "application/json"
        self.init(method, target, headerFields: fields, body: json.serialized())
    }
}

/// A response from the mock server.
///
/// ```swift
/// let response = await server.respond(to: MockRequest(.get, "/people/1"))
/// response.status            // .ok
/// try response.json()["name"]
/// ```
public struct MockResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body bytes.
    public var body: [UInt8]
    /// A body sent as it is produced, in place of ``body`` (which is then empty); see ``StreamingBody``.
    public var stream: StreamingBody?
    /// How a transport sends the answer: as it is, throttled, or failing on purpose (faults set it).
    public var delivery = Delivery.normal
    /// The WebSocket session a `101` starts (``webSocket``), boxed: other answers pay one word for it.
    var upgrade: UpgradeBox?

    /// How a transport sends an answer.
    public enum Delivery: Sendable, Hashable {
        /// As fast as the client reads.
        case normal
        /// The body at this many bytes per second (a bandwidth fault).
        case throttled(bytesPerSecond: Int)
        /// Failing below HTTP (a connection fault): see ``ConnectionFault``.
        case fault(ConnectionFault)
    }

    /// Creates a response.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
    }

    /// A response whose body is streamed.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], stream: StreamingBody) {
        self.status = status
        self.headerFields = headerFields
        self.body = []
        self.stream = stream
    }

    /// A response with a JSON body and `Content-Type: application/json`.
    public init(status: HTTPResponse.Status = .ok, headerFields: HTTPFields = [:], json: JSON) {
        var fields = headerFields
        if fields[.contentType] == nil {
            fields.append(Self.jsonContentType)
        } else {
            fields[.contentType] = Self.jsonContentType.value
        }
        self.init(status: status, headerFields: fields, body: json.serialized())
    }

    /// `Content-Type: application/json; charset=utf-8`, built once: making a field checks its value
    /// byte by byte, which every JSON response would otherwise pay again.
    static let jsonContentType = HTTPField(name: .contentType, value: "application/json; charset=utf-8")

    /// The body parsed as JSON.
    public func json() throws(JSONParsingError) -> JSON { try JSON(parsing: body) }
}
