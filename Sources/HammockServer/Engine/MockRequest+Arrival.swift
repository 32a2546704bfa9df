public import HTTPTypes

extension MockRequest {
    /// A request as a transport received it, read the one way every entrance to the server reads it (the
    /// socket's `HTTPConnectionHandler`, `MockServerTransport`, `HammockURLProtocol`): the target in origin
    /// form (an absolute `http://host/people` becomes `/people`), header fields checked by name, `Host`
    /// counted where HTTP/1.1 requires exactly one, and a body without `Content-Length` given one, as a
    /// client on a socket would send it.
    ///
    /// A request that cannot be read this way comes back refused (its ``rejection`` holds the 400, its
    /// method and path are placeholders): sent to the server like any other, it is answered, logged and
    /// journaled as the socket's refusals are.
    ///
    /// Inlinable so that each transport gets it specialized for its own sequence of fields: called across
    /// the module boundary unspecialized, the loop over NIO's headers cost 1.7% of a GET's CPU more than
    /// the socket's own copy of it did (perf, docs/benchmarks.md).
    @inlinable
    package static func arriving<Fields: Sequence>(
        _ method: HTTPRequest.Method, target: String, fields: Fields, body: [UInt8]?, requiringOneHost: Bool = false
    ) -> MockRequest where Fields.Element == (name: String, value: String) {
        // One pass over the fields: converted, and the Host fields counted (no array of their values).
        var headerFields = HTTPFields()
        headerFields.reserveCapacity(fields.underestimatedCount)
        var hosts = 0
        var badName: String?
        for (name, value) in fields {
            guard let fieldName = HTTPField.Name(name) else {
                badName = badName ?? name
                continue
            }
            if fieldName.canonicalName == "host" { hosts += 1 }
            headerFields.append(HTTPField(name: fieldName, value: value))
        }
        return arriving(
            method, target: target, headerFields: headerFields, hosts: hosts, badName: badName, body: body,
            requiringOneHost: requiringOneHost)
    }

    /// The rest of ``arriving(_:target:fields:body:requiringOneHost:)``, once the fields are converted.
    @usableFromInline
    package static func arriving(
        _ method: HTTPRequest.Method, target: String, headerFields: HTTPFields, hosts: Int, badName: String?,
        body: [UInt8]?, requiringOneHost: Bool
    ) -> MockRequest {
        switch read(
            method, target: target, headerFields: headerFields, hosts: hosts, badName: badName, body: body,
            requiringOneHost: requiringOneHost)
        {
        case .success(let request): return request
        case .failure(let problem):
            var refused = MockRequest(.get, "/")
            refused.rejection = Rejection(problem: problem, isUnreadable: true)
            return refused
        }
    }

    private static func read(
        _ method: HTTPRequest.Method, target: String, headerFields: HTTPFields, hosts: Int, badName: String?,
        body: [UInt8]?, requiringOneHost: Bool
    ) -> Result<MockRequest, HTTPProblem> {
        var headerFields = headerFields
        // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request.
        if requiringOneHost && hosts != 1 {
            return .failure(
                .badRequest(hosts == 0 ? "An HTTP/1.1 request needs a Host header" : "A request may have only one Host header"))
        }
        guard let path = originForm(of: target) else {
            return .failure(.badRequest("The request target '\(target.prefix(200))' is not a path"))
        }
        if let badName {
            return .failure(.badRequest("'\(badName.prefix(200))' is not a header field name"))
        }
        if let body, headerFields[.contentLength] == nil, headerFields[.transferEncoding] == nil {
            headerFields[.contentLength] = String(body.count)
        }
        return .success(MockRequest(method, path, headerFields: headerFields, body: body ?? []))
    }

    /// The path and query of a request target: origin form (`/people?x=1`) as is, absolute form
    /// (`http://host/people`) without its scheme and authority; `nil` for anything else (`*`, `host:port`).
    package static func originForm(of uri: String) -> String? {
        if uri.hasPrefix("/") { return uri }
        for scheme in ["http://", "https://"] where uri.lowercased().hasPrefix(scheme) {
            let afterScheme = uri.dropFirst(scheme.count)
            guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            let rest = afterScheme[slash...]
            return rest.hasPrefix("/") ? String(rest) : "/" + rest
        }
        return nil
    }
}
