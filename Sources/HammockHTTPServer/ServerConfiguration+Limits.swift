extension ServerConfiguration {
    /// The connection limits the file asks for, on top of the defaults.
    public var connectionLimits: ConnectionLimits {
        var limits = ConnectionLimits()
        if let idleTimeout { limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000)) }
        if let requestTimeout { limits.requestTimeout = .milliseconds(Int64(requestTimeout * 1000)) }
        return limits
    }
}
