/// How long and how much one HTTP connection may take, so that slow, idle or oversized clients cannot
/// hold the server's sockets.
///
/// ```swift
/// try await server.start(port: 0, limits: ConnectionLimits(idleTimeout: .seconds(5), requestTimeout: .seconds(10)))
/// ```
/// The defaults suit a mock server on a developer's machine: generous enough for a debugger paused in
/// the middle of an upload, short enough that a forgotten connection does not live forever.
public struct ConnectionLimits: Sendable, Hashable {
    /// How long a connection may stay open with no request in progress before it is closed. 60 s by default.
    public var idleTimeout: Duration
    /// How long a client may take to send one whole request (head and body), counted from its first
    /// byte; a slower one gets 408 and the connection is closed. 30 s by default.
    public var requestTimeout: Duration
    /// After an error that ends a connection (a malformed request, a body over the limit), how long
    /// the server keeps reading and discarding what the client still sends, so that the client sees
    /// the error response rather than a reset. 2 s by default.
    public var lingerTimeout: Duration
    /// The most bytes a request head's header fields may take; more is 431. 64 KiB by default.
    public var maximumHeaderBytes: Int
    /// The most header fields a request may have; more is 431. 200 by default.
    public var maximumHeaderFields: Int

    /// Creates limits.
    public init(
        idleTimeout: Duration = .seconds(60),
        requestTimeout: Duration = .seconds(30),
        lingerTimeout: Duration = .seconds(2),
        maximumHeaderBytes: Int = 64 << 10,
        maximumHeaderFields: Int = 200
    ) {
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.lingerTimeout = lingerTimeout
        self.maximumHeaderBytes = maximumHeaderBytes
        self.maximumHeaderFields = maximumHeaderFields
    }

    /// The limits as the server applies them: timeouts of at least a millisecond (a zero or negative
    /// one would wake a connection's timer in a loop), header budgets from 1 to 1 GiB and 1 to 100,000
    /// fields. Any value of the public properties is safe to set.
    var effective: ConnectionLimits {
        let shortest = Duration.milliseconds(1)
        return ConnectionLimits(
            idleTimeout: max(idleTimeout, shortest), requestTimeout: max(requestTimeout, shortest),
            lingerTimeout: max(lingerTimeout, shortest), maximumHeaderBytes: min(max(maximumHeaderBytes, 1), 1 << 30),
            maximumHeaderFields: min(max(maximumHeaderFields, 1), 100_000))
    }
}
