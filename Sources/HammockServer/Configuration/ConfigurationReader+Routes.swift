import HTTPTypes
import HammockJSON

extension ConfigurationReader {
    static let routeKeys = ["method", "path", "status", "headers", "body", "match", "latency"]
    static let matchKeys = ["query", "headers", "body"]

    /// The `routes` array: stubs tried in file order.
    func routes(_ value: JSON?) throws(ConfigurationError) -> [StubRoute] {
        guard let value, !value.isNull else { return [] }
        guard case .array(let elements) = value else { throw fail("routes", "expected an array of routes") }
        var routes: [StubRoute] = []
        for (index, element) in elements.enumerated() {
            routes.append(try route(element, at: "routes[\(index)]"))
        }
        return routes
    }

    func route(_ value: JSON, at path: String) throws(ConfigurationError) -> StubRoute {
        guard case .object(let object) = value else {
            throw fail(path, "expected a route: {\"method\": \"POST\", \"path\": \"/login\", \"body\": {...}}")
        }
        for key in object.keys where !Self.routeKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected one of \(Self.routeKeys.joined(separator: ", "))")
        }
        guard let methodName = try string(object["method"], at: "\(path).method") else {
            throw fail("\(path).method", "missing; name the HTTP method, such as \"GET\" or \"POST\"")
        }
        guard let method = HTTPRequest.Method(methodName.uppercased()) else {
            throw fail("\(path).method", "'\(methodName)' is not an HTTP method")
        }
        guard let pattern = try string(object["path"], at: "\(path).path") else {
            throw fail("\(path).path", "missing; give the path, such as \"/login\" or \"/users/:id\"")
        }
        // A 1xx is no final answer: a client would wait for the one that never comes.
        let status = try integer(object["status"], at: "\(path).status", in: 200...599) ?? 200
        let headers = try strings(object["headers"], at: "\(path).headers").map { (name, value) throws(ConfigurationError) in
            guard let field = HTTPField.Name(name) else { throw fail("\(path).headers.\(name)", "not a valid header name") }
            return (name: field, value: value)
        }
        for header in headers {
            let problem: StubError?
            do {
                _ = try StubTemplate.pieces(of: header.value)
                problem = nil
            } catch {
                problem = error
            }
            if let problem { throw fail("\(path).headers.\(header.name)", problem.message) }
        }
        var match = StubRoute.Match()
        if let matchValue = object["match"], !matchValue.isNull {
            guard case .object(let conditions) = matchValue else {
                throw fail("\(path).match", "expected {\"query\": {...}, \"headers\": {...}, \"body\": {...}}")
            }
            for key in conditions.keys where !Self.matchKeys.contains(key) {
                throw fail("\(path).match.\(key)", "unknown key; expected query, headers or body")
            }
            match.query = Dictionary(uniqueKeysWithValues: try strings(conditions["query"], at: "\(path).match.query"))
            match.headers = Dictionary(uniqueKeysWithValues: try strings(conditions["headers"], at: "\(path).match.headers"))
            if let body = conditions["body"], !body.isNull {
                guard case .object(let members) = body else { throw fail("\(path).match.body", "expected an object") }
                match.body = members
            }
        }
        let latency = try latency(object["latency"], at: "\(path).latency")
        do {
            return try StubRoute(
                method, pattern, match: match, status: HTTPResponse.Status(code: status), headers: headers,
                body: object["body"], latency: latency)
        } catch {
            let key = error.message.hasPrefix("the path") ? "path" : error.message.hasPrefix("the status") ? "status" : "body"
            throw fail("\(path).\(key)", error.message)
        }
    }

    /// An object of strings, in order.
    func strings(_ value: JSON?, at path: String) throws(ConfigurationError) -> [(String, String)] {
        guard let value, !value.isNull else { return [] }
        guard case .object(let object) = value else { throw fail(path, "expected an object of strings") }
        var pairs: [(String, String)] = []
        for (key, member) in object {
            guard case .string(let text) = member else {
                throw fail("\(path).\(key)", "expected a string, found \(member.kindName)")
            }
            pairs.append((key, text))
        }
        return pairs
    }
}
