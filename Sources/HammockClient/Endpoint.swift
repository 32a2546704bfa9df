public import Foundation
public import HTTPTypes

/// A request an `@API` method sends, built but not sent, with the type its answer decodes to: what a
/// typed resource loads (`service.resource(people.endpoints.person(id: 3))`), or what you send yourself.
///
/// ```swift
/// let endpoint = api.endpoints.person(id: 3)          // Endpoint<Person>
/// let person = try await client.result(of: endpoint.request) as Person
/// ```
public struct Endpoint<Value>: Sendable {
    /// The request.
    public var request: RequestBuilder

    /// The endpoint of `request`, whose answer is a `Value`.
    public init(_ request: RequestBuilder) { self.request = request }

    /// The request's method.
    public var method: HTTPRequest.Method { request.method }

    /// The request's target relative to a base URL (`/people/3?embed=cars`), placeholders filled and
    /// encoded as the client sends them.
    /// - Throws: ``RestError`` with ``RestError/Reason/invalidRequest(_:)`` for a placeholder without a
    ///   value, or a value a path segment cannot be.
    public func target() throws(RestError) -> String {
        do {
            return try request.resolvedTarget(basePath: "")
        } catch {
            throw RestError(.invalidRequest(error.message), method: request.method, url: request.template)
        }
    }
}

/// Told of every write a ``RestClient`` carried out: a 2xx answer to a method other than GET, HEAD,
/// OPTIONS and TRACE. A `Service` (HammockResources) given to a client (`RestClient(…, writeObservers: [service])`)
/// invalidates the resources the write touched, so a screen showing `/people` reloads after a create
/// sent through an `@API` client.
public protocol WriteObserver: Sendable {
    /// A write succeeded; called before the client's caller gets the answer.
    func clientDidWrite(_ write: ClientWrite) async
}

/// A write a client carried out, as a ``WriteObserver`` hears of it.
public struct ClientWrite: Sendable, Hashable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The URL written to.
    public var url: URL
    /// The status answered.
    public var status: HTTPResponse.Status
    /// What the request said it changes besides its URL (`@Invalidates`), as absolute URLs.
    public var invalidates: [URL]

    public init(method: HTTPRequest.Method, url: URL, status: HTTPResponse.Status, invalidates: [URL] = []) {
        self.method = method
        self.url = url
        self.status = status
        self.invalidates = invalidates
    }

    /// Whether a 2xx answer to `method` changed something: every method but GET, HEAD, OPTIONS and TRACE.
    public static func isWrite(_ method: HTTPRequest.Method) -> Bool {
        method != .get && method != .head && method != .options && method != .trace
    }
}
