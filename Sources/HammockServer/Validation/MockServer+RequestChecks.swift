extension MockServer {
    /// Checks each request an API document describes against it from the next request on (`nil`: checks
    /// none). A configuration's `validation` section sets them when the server is made and when it is
    /// reloaded.
    public func setRequestChecks(_ checks: RequestChecks?) {
        runtimeCell.change { $0.requestChecks = checks }
    }

    /// The checks in force.
    public var requestChecks: RequestChecks? { runtimeCell.runtime.settings.requestChecks }
}
