/// A step every request passes through on its way to the router, and every response on its way back.
///
/// Middleware sees the request first and may answer it itself, change it, or hand it on with `next`;
/// it then sees whatever came back (or was thrown) and may change that. Errors thrown here or further
/// in become problem responses, with the server's CORS headers and log line like any other answer.
///
/// ```swift
/// /// Answers every request with 503 while a flag is set, as a maintenance window would.
/// struct Maintenance: MockMiddleware {
///     let isDown: @Sendable () -> Bool
///
///     func handle(
///         _ request: MockRequest, next: (MockRequest) async throws -> MockResponse
///     ) async throws -> MockResponse {
///         guard !isDown() else { throw HTTPProblem(.serviceUnavailable, detail: "Back soon") }
///         var response = try await next(request)
///         response.headerFields[HTTPField.Name("X-Served-By")!] = "mock"
///         return response
///     }
/// }
/// let server = try await MockServer(resources: [people], middleware: [Maintenance(isDown: { false })])
/// ```
///
/// Your middleware runs inside the server's own, in the order given, closest to the router: the
/// request journal, request logging, simulated latency, CORS, problem mapping, `HEAD`, conditional
/// requests (`ETag`, `Last-Modified`, 304), then yours, then the router. So a response you return for a `GET`
/// gets validators and 304s, a `HEAD` of it loses its body, and a problem you throw is logged and
/// delayed like the rest.
///
/// Served over HTTP (`HammockHTTPServer`), middleware runs on the event loop of the request's
/// connection: `await` what takes time instead of blocking on it.
public protocol MockMiddleware: Sendable {
    /// Answers `request`, usually by calling `next` and adjusting what it returns.
    func handle(_ request: MockRequest, next: (MockRequest) async throws -> MockResponse) async throws -> MockResponse
}

/// Middleware composed around a final responder once, when the server is assembled.
struct MiddlewareChain: Sendable {
    typealias Responder = @Sendable (MockRequest) async throws -> MockResponse

    let respond: Responder

    /// `middleware[0]` is outermost: it sees the request first and the response last. Adjacent
    /// ``OutcomeStep``s share one frame.
    init(_ middleware: [any MockMiddleware], around responder: @escaping Responder) {
        var next = responder
        var index = middleware.count - 1
        while index >= 0 {
            let inner = next
            guard middleware[index] is any OutcomeStep else {
                let step = middleware[index]
                next = { request in try await step.handle(request, next: inner) }
                index -= 1
                continue
            }
            // The run of outcome steps that ends here, innermost first: the order they see the outcome in.
            var run: [any OutcomeStep] = []
            while index >= 0, let step = middleware[index] as? any OutcomeStep {
                run.append(step)
                index -= 1
            }
            let steps = run
            next = { request in
                var outcome: Result<MockResponse, any Error>
                do {
                    outcome = .success(try await inner(request))
                } catch {
                    outcome = .failure(error)
                }
                for step in steps { outcome = step.finish(outcome, for: request) }
                return try outcome.get()
            }
        }
        respond = next
    }
}

/// The server's chain, assembled once for each kind of route from one list of steps: the API's routes
/// (resources, stubs, yours) take the steps marked for them, the admin API's routes
/// (``MatchedRoute/Kind/admin``) those marked for it. Choosing a chain costs one comparison per request;
/// a step that skipped a kind by asking on every request would cost an `async` hop.
struct Pipelines: Sendable {
    /// A step and the kinds of route that take it.
    struct Step {
        var middleware: any MockMiddleware
        var takenByAPI: Bool
        var takenByAdmin: Bool

        static func api(_ middleware: any MockMiddleware) -> Step {
            Step(middleware: middleware, takenByAPI: true, takenByAdmin: false)
        }
        static func admin(_ middleware: any MockMiddleware) -> Step {
            Step(middleware: middleware, takenByAPI: false, takenByAdmin: true)
        }
        static func both(_ middleware: any MockMiddleware) -> Step {
            Step(middleware: middleware, takenByAPI: true, takenByAdmin: true)
        }
    }

    /// For the API's routes, and for a path no family serves.
    let api: MiddlewareChain
    /// For the admin API's routes.
    let admin: MiddlewareChain

    /// - Parameters:
    ///   - responder: What the API's chain ends in.
    ///   - adminResponder: What the admin API's chain ends in; only it reaches the admin API's routes, so
    ///     a request whose path a middleware of yours rewrote under the admin prefix never skips the guard.
    init(
        _ steps: [Step], around responder: @escaping MiddlewareChain.Responder,
        admin adminResponder: @escaping MiddlewareChain.Responder
    ) {
        api = MiddlewareChain(steps.filter(\.takenByAPI).map(\.middleware), around: responder)
        admin = MiddlewareChain(steps.filter(\.takenByAdmin).map(\.middleware), around: adminResponder)
    }
}
