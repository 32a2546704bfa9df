extension ServerConfiguration {
    /// The connection limits the file asks for, on top of the defaults.
    public var connectionLimits: ConnectionLimits {
        var limits = ConnectionLimits()
        // The reader keeps files to 0–3600 s; these are public properties, so any Double is held in range.
        if let idleTimeout { limits.idleTimeout = .milliseconds(Int64(Latency.clamped(idleTimeout) * 1000)) }
        if let requestTimeout { limits.requestTimeout = .milliseconds(Int64(Latency.clamped(requestTimeout) * 1000)) }
        return limits
    }
}
