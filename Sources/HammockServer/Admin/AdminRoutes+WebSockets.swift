import HammockJSON

extension AdminRoutes {
    /// `POST <prefix>/websockets/messages` with `{"path": "/ws/prices", "json": {...}}` (or `text`,
    /// `base64`; no `path` for every socket): sends it on the open sockets; answers how many took it.
    static func pushWebSocketMessage(_ call: Call) async throws -> MockResponse {
        guard case .object(let object) = try jsonBody(of: call.request) else {
            throw HTTPProblem.badRequest("Expected {\"path\": \"/ws/prices\", \"text\": \"…\"} (or json, base64)")
        }
        for key in object.keys where !["path", "text", "json", "base64"].contains(key) {
            throw HTTPProblem.badRequest("Unknown key '\(key.prefix(40))'; expected path and one of text, json, base64")
        }
        let given = ["text", "json", "base64"].filter { object[$0] != nil }
        guard given.count == 1 else { throw HTTPProblem.badRequest("Give one of text, json and base64") }
        let message: WebSocketMessage
        switch (given[0], object[given[0]]) {
        case ("text", .string(let text)?): message = .text(text)
        case ("json", let json?): message = .text(String(decoding: json.serialized(), as: UTF8.self))
        case ("base64", .string(let text)?):
            guard let bytes = Base64.decode(text) else { throw HTTPProblem.badRequest("base64: not base64") }
            message = .binary(bytes)
        default: throw HTTPProblem.badRequest("\(given[0]): expected a string")
        }
        var path: String?
        if let value = object["path"] {
            guard case .string(let text) = value else { throw HTTPProblem.badRequest("path: expected a path pattern") }
            path = text
        }
        do throws(StubError) {
            return MockResponse(json: ["sent": .integer(try await call.server.sendToWebSockets(message, path: path))])
        } catch {
            throw HTTPProblem.badRequest("path: \(error.message)")
        }
    }
}
