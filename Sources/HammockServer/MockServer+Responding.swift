import HTTPTypes
import Synchronization

extension MockServer {
    /// Answers a request without any socket: the same pipeline (routing, validation, storage,
    /// serializers, controller, latency, CORS, conditional requests) as over HTTP. Never throws: every
    /// failure becomes a problem response.
    ///
    /// ```swift
    /// let created = await server.respond(to: MockRequest(.post, "/people", json: ["name": "john"]))
    /// #expect(created.status == .created)
    /// ```
    public func respond(to request: MockRequest) async -> MockResponse {
        var request = request
        if request.context == nil { request.context = makeContext(arrival: .now, peer: nil) }
        // Before any request, admin ones included (a snapshot restored first must not become the start).
        if !baseline.isTaken { await takeBaselineOnce() }
        // The one read of the settings this request makes: everything it meets comes from this value.
        let runtime = runtimeCell.runtime
        request.runtime = runtime
        let pipeline = router.isAdmin(request) ? runtime.pipelines.admin : runtime.pipelines.api
        do {
            return try await pipeline.respond(request)
        } catch {
            // The problem middleware maps every error the server's own steps see; this is reached by
            // errors of middleware placed outside them.
            return Self.unmappedFailure(.failure(error))
        }
    }

    /// Whether the route that would answer `request`, whose head has arrived and whose body will pass the
    /// body limit, reads its body as it arrives (``MockEndpoint/takesStreamedBody``): the transport then
    /// hands the request over with a ``RequestBodyStream`` instead of refusing it with 413.
    package func takesStreamedBody(_ request: MockRequest) -> Bool {
        router.takesStreamedBody(request, runtime: runtimeCell.runtime)
    }

    /// The 500 for an error no problem mapping saw.
    static func unmappedFailure(_ outcome: Result<MockResponse, any Error>) -> MockResponse {
        switch outcome {
        case .success(let response): response
        case .failure(let error): HTTPProblem(.internalServerError, detail: String(describing: error)).response
        }
    }

    /// Answers a request a transport refused before the engine saw it (a body over the limit, headers
    /// that could not be parsed, a request too slow to arrive) with `problem`, through the same pipeline,
    /// so it gets the same CORS headers, latency and log line as every other answer.
    /// - Parameter request: The request as far as it was read; `nil` if nothing of it could be.
    package func respond(to request: MockRequest?, rejectedWith problem: HTTPProblem) async -> MockResponse {
        var rejected = request ?? MockRequest(.get, "/")
        rejected.body = []
        rejected.rejection = MockRequest.Rejection(problem: problem, isUnreadable: request == nil)
        return await respond(to: rejected)
    }

    /// A context for the next request: its number, and what the transport knows of its arrival.
    package func makeContext(arrival: ContinuousClock.Instant, peer: String?, isSecure: Bool = false) -> MockRequestContext {
        MockRequestContext(
            id: requestNumbers.add(1, ordering: .relaxed).newValue, arrival: arrival, peer: peer, isSecure: isSecure)
    }

    /// Stops whatever serves the server on a socket, if anything does, releases every response held back
    /// by simulated latency, and cancels webhook deliveries not yet made; returns when the transport has
    /// closed every connection. Calling it on a stopped server does nothing.
    public func stop() async {
        stopSignal.raise()
        let listener = self.listener.withLock { $0 }
        await listener?.stop()
        // Webhooks still waiting (a delay, a backoff) are not sent after the server stopped.
        await webhookDispatcher.cancelAll()
        await inProcessSockets.stopAll()
        stopSignal.lower()
    }
}

/// What serves a ``MockServer`` outside the process (HammockHTTPServer's HTTP/1.1 listener), so that
/// ``MockServer/stop()`` can stop it without the engine depending on it.
package protocol MockServerListener: Sendable {
    /// Stops serving; returns when every connection is closed.
    func stop() async
}
