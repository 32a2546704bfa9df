import HTTPTypes
import HammockJSON
import HammockStore

extension ConfigurationReader {
    static let answerKeys = [
        "status", "reason", "headers", "body", "text", "base64", "file", "events", "repeat", "verbatim", "websocket",
    ]
    static let eventKeys = ["data", "event", "id", "retry", "delay"]
    static let webSocketKeys = ["messages", "repeat", "echo", "feed", "protocols", "keepOpen"]
    static let webSocketStepKeys = ["text", "json", "base64", "close", "reason", "drop", "receive", "delay"]
    static let routeKeys =
        [
            "method", "path", "match", "priority", "latency", "responses", "afterLast", "order", "scenario", "whenState",
            "setState", "create", "alternatives", "requires",
        ]
        + answerKeys
    static let matchKeys = ["query", "headers", "path", "body"]

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
        // A WebSocket is opened with GET: the method may go unsaid, on a route that answers with a socket
        // or plays sockets in turn (a recording's sessions on one path).
        func opensSocket(_ answer: JSON?) -> Bool { answer?["websocket"].map { !$0.isNull } ?? false }
        let isSocket = opensSocket(value) || (object["responses"]?.arrayValue?.contains(where: opensSocket) ?? false)
        guard let methodName = try string(object["method"], at: "\(path).method") ?? (isSocket ? "GET" : nil) else {
            throw fail("\(path).method", "missing; name the HTTP method, such as \"GET\" or \"POST\"")
        }
        guard let method = HTTPRequest.Method(methodName.uppercased()) else {
            throw fail("\(path).method", "'\(methodName)' is not an HTTP method")
        }
        guard let pattern = try string(object["path"], at: "\(path).path") else {
            throw fail("\(path).path", "missing; give the path, such as \"/login\" or \"/users/:id\"")
        }
        var answers: [StubAnswer] = []
        if let responses = object["responses"], !responses.isNull {
            if let key = Self.answerKeys.first(where: { object[$0] != nil }) {
                throw fail("\(path).\(key)", "give it inside each of responses, not beside them")
            }
            guard case .array(let list) = responses, !list.isEmpty else {
                throw fail("\(path).responses", "expected a non-empty array of answers: [{\"status\": 202}, {\"body\": {...}}]")
            }
            for (index, element) in list.enumerated() {
                let at = "\(path).responses[\(index)]"
                guard case .object(let answer) = element else {
                    throw fail(at, "expected an answer: {\"status\": 200, \"body\": ...}")
                }
                for key in answer.keys where !Self.answerKeys.contains(key) {
                    throw fail("\(at).\(key)", "unknown key; expected one of \(Self.answerKeys.joined(separator: ", "))")
                }
                answers.append(try self.answer(answer, at: at))
            }
        } else {
            answers = [try answer(object, at: path)]
        }
        let match = try self.match(object["match"], at: "\(path).match")
        let afterLast = try choice(object["afterLast"], at: "\(path).afterLast", of: StubRoute.AfterLast.self) ?? .repeatLast
        let order = try choice(object["order"], at: "\(path).order", of: StubRoute.Order.self) ?? .inTurn
        var scenario: StubRoute.Scenario?
        if let name = try string(object["scenario"], at: "\(path).scenario") {
            scenario = StubRoute.Scenario(
                name, whenState: try string(object["whenState"], at: "\(path).whenState"),
                setState: try string(object["setState"], at: "\(path).setState"))
        } else if let key = ["whenState", "setState"].first(where: { object[$0] != nil }) {
            throw fail("\(path).\(key)", "belongs to a scenario; name it with \"scenario\"")
        }
        let latency = try latency(object["latency"], at: "\(path).latency")
        var creates: [StubRoute.Creation] = []
        if let create = object["create"], !create.isNull {
            let list: [JSON] = if case .array(let elements) = create { elements } else { [create] }
            for (index, element) in list.enumerated() {
                let at = create.arrayValue == nil ? "\(path).create" : "\(path).create[\(index)]"
                guard case .object(let creation) = element, case .string(let resource)? = creation["resource"],
                    case .object(let values)? = creation["values"] ?? .object([:])
                else {
                    throw fail(at, "expected {\"resource\": \"orders\", \"values\": {\"total\": \"{{body.total}}\"}}")
                }
                for key in creation.keys where key != "resource" && key != "values" {
                    throw fail("\(at).\(key)", "unknown key; expected resource and values")
                }
                do {
                    creates.append(try StubRoute.Creation(resource, values: values))
                } catch {
                    throw fail("\(at).values", error.message)
                }
            }
        }
        var stub: StubRoute
        do {
            stub = try StubRoute(
                method, pattern, match: match, answers: answers, afterLast: afterLast, order: order, scenario: scenario,
                latency: latency, creates: creates)
        } catch {
            throw fail("\(path).path", error.message)
        }
        stub.priority = try integer(object["priority"], at: "\(path).priority", in: 1...1_000) ?? StubRoute.defaultPriority
        // `"requires": {"channelId": "channels"}`: the path parameter names a record that must exist.
        if let value = object["requires"], !value.isNull {
            guard case .object(let required) = value else {
                throw fail("\(path).requires", "expected {\"pathParameter\": \"resource\"}")
            }
            for (parameter, resource) in required {
                guard stub.path.parameterNames.contains(parameter) else {
                    throw fail("\(path).requires.\(parameter)", "the path has no parameter '\(parameter.prefix(60))'")
                }
                guard case .string(let name) = resource, !name.isEmpty else {
                    throw fail("\(path).requires.\(parameter)", "expected the name of a resource")
                }
                stub.requiredRecords[parameter] = name
            }
        }
        if let value = object["alternatives"], !value.isNull {
            guard case .array(let list) = value else {
                throw fail("\(path).alternatives", "expected an array of answers, each with an optional name")
            }
            for (index, element) in list.enumerated() {
                let at = "\(path).alternatives[\(index)]"
                guard case .object(var answer) = element else {
                    throw fail(at, "expected an answer: {\"status\": 404, \"body\": ...}")
                }
                let name = try string(answer["name"], at: "\(at).name")
                answer["name"] = nil
                for key in answer.keys where !Self.answerKeys.contains(key) {
                    throw fail("\(at).\(key)", "unknown key; expected name or one of \(Self.answerKeys.joined(separator: ", "))")
                }
                stub.alternatives.append(StubRoute.Alternative(name: name, answer: try self.answer(answer, at: at)))
            }
        }
        return stub
    }

    /// A route's `match`: `query`, `headers` and `path` name values, each a string to equal or a matcher
    /// (`{"matches": "^[0-9]+$"}`, `{"atLeast": 1}`, `{"absent": true}`, `{"not": …}`, `{"anyOf": […]}`);
    /// `body` names top-level members to equal (a matcher too) and JSON pointers (`"/user/name"`).
    func match(_ value: JSON?, at path: String) throws(ConfigurationError) -> StubRoute.Match {
        var match = StubRoute.Match()
        guard let value, !value.isNull else { return match }
        guard case .object(let sections) = value else {
            throw fail(path, "expected {\"query\": {...}, \"headers\": {...}, \"path\": {...}, \"body\": {...}}")
        }
        for key in sections.keys where !Self.matchKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected query, headers, path or body")
        }
        func condition(_ place: StubRoute.Place, _ value: JSON, at keyPath: String) throws(ConfigurationError) {
            do {
                match.conditions.append(try StubRoute.Condition(place, try StubRoute.Matcher.parse(value) ?? .equals(value)))
            } catch {
                throw fail(keyPath, error.message)
            }
        }
        for (section, place) in [
            ("query", StubRoute.Place.query), ("headers", StubRoute.Place.header), ("path", StubRoute.Place.path),
        ] {
            guard let entries = sections[section], !entries.isNull else { continue }
            guard case .object(let named) = entries else {
                throw fail("\(path).\(section)", "expected an object of names and values or matchers")
            }
            for (name, entry) in named {
                // A string is an equality, kept where it always was (and where near misses name it).
                if case .string(let text) = entry, section != "path" {
                    if section == "query" { match.query[name] = text } else { match.headers[name] = text }
                } else {
                    try condition(place(name), entry, at: "\(path).\(section).\(name)")
                }
            }
        }
        if let body = sections["body"], !body.isNull {
            guard case .object(let members) = body else { throw fail("\(path).body", "expected an object") }
            for (key, entry) in members {
                if key.hasPrefix("/") {
                    try condition(.body(key), entry, at: "\(path).body.\(key)")
                } else if Self.looksLikeMatcher(entry) {
                    let pointer = "/" + key.replacing("~", with: "~0").replacing("/", with: "~1")
                    try condition(.body(pointer), entry, at: "\(path).body.\(key)")
                } else {
                    match.body[key] = entry
                }
            }
        }
        return match
    }

    /// An object of operators only, even a malformed one: read as a matcher, so its mistake is reported.
    static func looksLikeMatcher(_ value: JSON) -> Bool {
        guard case .object(let object) = value, !object.isEmpty else { return false }
        return object.keys.allSatisfy(StubRoute.Matcher.operators.contains)
    }

    /// One answer: `status`, `reason`, `headers`, and at most one of `body` (JSON), `text`, `base64`,
    /// `file` (relative to the configuration's directory, checked now and streamed from disk on each
    /// answer) and `events` (Server-Sent Events, with `repeat`).
    func answer(_ object: JSONObject, at path: String) throws(ConfigurationError) -> StubAnswer {
        // A 1xx is no final answer: a client would wait for the one that never comes.
        let status = try integer(object["status"], at: "\(path).status", in: 200...599) ?? 200
        let reason = try string(object["reason"], at: "\(path).reason")
        let headers = try strings(object["headers"], at: "\(path).headers").map { (name, value) throws(ConfigurationError) in
            guard let field = HTTPField.Name(name) else { throw fail("\(path).headers.\(name)", "not a valid header name") }
            return (name: field, value: value)
        }
        // `"verbatim": true`: headers and body are served as written, `{{` included (what a recording writes).
        let verbatim = try bool(object["verbatim"], at: "\(path).verbatim") ?? false
        for header in headers where !verbatim {
            let problem: StubError?
            do {
                _ = try StubTemplate.pieces(of: header.value)
                problem = nil
            } catch {
                problem = error
            }
            if let problem { throw fail("\(path).headers.\(header.name)", problem.message) }
        }
        let bodyKeys = ["body", "text", "base64", "file", "events", "websocket"].filter {
            object[$0] != nil && object[$0] != .null
        }
        if bodyKeys.count > 1 {
            throw fail("\(path).\(bodyKeys[1])", "give one of body, text, base64, file, events and websocket")
        }
        if object["repeat"] != nil, bodyKeys.first != "events" { throw fail("\(path).repeat", "belongs to events") }
        var body: StubAnswer.Body?
        switch bodyKeys.first {
        case "body": body = object["body"].map(StubAnswer.Body.json)
        case "text": body = try string(object["text"], at: "\(path).text").map(StubAnswer.Body.text)
        case "base64":
            guard let text = try string(object["base64"], at: "\(path).base64"), let bytes = Base64.decode(text) else {
                throw fail("\(path).base64", "not base64")
            }
            body = .bytes(bytes)
        case "file":
            guard let name = try string(object["file"], at: "\(path).file") else { break }
            let full = name.hasPrefix("/") ? name : directory + name
            do {
                _ = try StreamingBody.file(at: full)
            } catch {
                throw fail("\(path).file", "cannot read \(full): \(error.reason)")
            }
            body = .file(full)
        case "events":
            body = try events(object["events"], repeats: object["repeat"], at: path)
        case "websocket":
            if let key = ["status", "reason"].first(where: { object[$0] != nil }) {
                throw fail("\(path).\(key)", "a WebSocket route answers 101 Switching Protocols; leave out \(key)")
            }
            body = .webSocket(try webSocket(object["websocket"], at: "\(path).websocket", verbatim: verbatim))
        default: break
        }
        do {
            return try StubAnswer(status: status, reasonPhrase: reason, headers: headers, body: body, verbatim: verbatim)
        } catch {
            let key =
                error.message.hasPrefix("the reason")
                ? "reason" : error.message.hasPrefix("the status") ? "status" : bodyKeys.first ?? "body"
            throw fail("\(path).\(key)", error.message)
        }
    }

    /// `events`: `[{"data": {...}, "event": "tick", "id": "1", "retry": 3000, "delay": 100}]`, and `repeat`.
    func events(_ value: JSON?, repeats: JSON?, at path: String) throws(ConfigurationError) -> StubAnswer.Body {
        guard case .array(let list)? = value, !list.isEmpty else {
            throw fail("\(path).events", "expected a non-empty array of events: [{\"data\": {...}, \"delay\": 100}]")
        }
        var events: [ServerSentEvent] = []
        for (index, element) in list.enumerated() {
            let at = "\(path).events[\(index)]"
            guard case .object(let object) = element else { throw fail(at, "expected an event: {\"data\": {...}}") }
            for key in object.keys where !Self.eventKeys.contains(key) {
                throw fail("\(at).\(key)", "unknown key; expected one of \(Self.eventKeys.joined(separator: ", "))")
            }
            guard let data = object["data"] else { throw fail("\(at).data", "missing; give the event's data") }
            let delay = try integer(object["delay"], at: "\(at).delay", in: 0...600_000) ?? 0
            events.append(
                ServerSentEvent(
                    event: try string(object["event"], at: "\(at).event"), data: data,
                    id: try string(object["id"], at: "\(at).id"),
                    retry: try integer(object["retry"], at: "\(at).retry", in: 0...86_400_000), delay: .milliseconds(delay)))
        }
        var repeating = false
        if let repeats, !repeats.isNull {
            guard case .bool(let flag) = repeats else { throw fail("\(path).repeat", "expected true or false") }
            repeating = flag
        }
        return .events(events, repeats: repeating)
    }

    /// `websocket`: `{"echo": true}`, `{"feed": ["people"]}`, `{"messages": [{"json": {...}, "delay": 500},
    /// {"close": 1000, "reason": "bye"}], "repeat": true}`, any together, and `protocols` and `keepOpen`;
    /// `verbatim` (the answer's) sends text and JSON as written.
    func webSocket(_ value: JSON?, at path: String, verbatim: Bool = false) throws(ConfigurationError) -> WebSocketScript {
        guard case .object(let object)? = value else {
            throw fail(path, "expected {\"echo\": true}, {\"feed\": [\"people\"]} or {\"messages\": [...]}")
        }
        for key in object.keys where !Self.webSocketKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected one of \(Self.webSocketKeys.joined(separator: ", "))")
        }
        var steps: [WebSocketScript.Step] = []
        if let messages = object["messages"], !messages.isNull {
            guard case .array(let list) = messages, !list.isEmpty else {
                throw fail("\(path).messages", "expected a non-empty array: [{\"text\": \"hello\", \"delay\": 100}]")
            }
            for (index, element) in list.enumerated() {
                steps.append(try webSocketStep(element, at: "\(path).messages[\(index)]", verbatim: verbatim))
            }
        }
        let feed: [String]
        switch object["feed"] {
        case nil, .null?: feed = []
        case .string(let name)?: feed = [name]
        case .array(let names)?:
            feed = try names.enumerated().map { (index, name) throws(ConfigurationError) in
                guard case .string(let text) = name else { throw fail("\(path).feed[\(index)]", "expected a resource's name") }
                return text
            }
        default: throw fail("\(path).feed", "expected a resource's name, an array of them, or \"*\"")
        }
        // Each name is checked against the resources once the file is read (ServerConfiguration).
        var protocols: [String] = []
        if case .array(let list)? = object["protocols"] {
            for (index, element) in list.enumerated() {
                guard case .string(let name) = element, WebSocketScript.isSubprotocolName(name) else {
                    throw fail("\(path).protocols[\(index)]", "expected a subprotocol's name (a token, such as graphql-ws)")
                }
                protocols.append(name)
            }
        } else if let other = object["protocols"], !other.isNull {
            throw fail("\(path).protocols", "expected an array of names")
        }
        let repeats = try bool(object["repeat"], at: "\(path).repeat") ?? false
        let echo = try bool(object["echo"], at: "\(path).echo") ?? false
        let keepsOpen = try bool(object["keepOpen"], at: "\(path).keepOpen") ?? false
        do {
            return try WebSocketScript(
                steps: steps, repeats: repeats, echo: echo, feed: feed, protocols: protocols, keepsOpen: keepsOpen,
                verbatim: verbatim)
        } catch {
            throw fail(path, error.message)
        }
    }

    /// One step of a WebSocket script: a message (`text`, `json` or `base64`), a `close` (a code, with
    /// `reason`) or `"drop": true`, each with a `delay` in milliseconds; or `"receive": true`, which waits
    /// for the client's next message.
    func webSocketStep(_ value: JSON, at path: String, verbatim: Bool = false) throws(ConfigurationError) -> WebSocketScript.Step
    {
        guard case .object(let object) = value else {
            throw fail(
                path,
                "expected a step: {\"text\": \"hello\"}, {\"json\": {...}}, {\"close\": 1000}, {\"drop\": true} or {\"receive\": true}"
            )
        }
        for key in object.keys where !Self.webSocketStepKeys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; expected one of \(Self.webSocketStepKeys.joined(separator: ", "))")
        }
        let delay = Duration.milliseconds(try integer(object["delay"], at: "\(path).delay", in: 0...600_000) ?? 0)
        let kinds = ["text", "json", "base64", "close", "drop", "receive"].filter { object[$0] != nil && object[$0] != .null }
        guard kinds.count == 1 else {
            throw fail(
                path,
                kinds.isEmpty
                    ? "give one of text, json, base64, close, drop and receive"
                    : "give only one of \(kinds.joined(separator: ", "))")
        }
        if object["reason"] != nil, kinds[0] != "close" { throw fail("\(path).reason", "belongs to close") }
        if kinds[0] == "receive" {
            guard try bool(object["receive"], at: "\(path).receive") == true else {
                throw fail("\(path).receive", "expected true")
            }
            // It waits for the client, so a delay there has nothing to count from: the next step's does.
            if object["delay"] != nil {
                throw fail("\(path).delay", "a receive waits for the client; give the delay to the step after it")
            }
            return .receive
        }
        switch kinds[0] {
        case "text": return .send(.text(try string(object["text"], at: "\(path).text") ?? ""), delay: delay)
        case "json":
            let json = object["json"] ?? .null
            do {
                if !verbatim { try StubTemplate.validate(json) }
            } catch {
                throw fail("\(path).json", error.message)
            }
            return .send(.json(json), delay: delay)
        case "base64":
            guard let text = try string(object["base64"], at: "\(path).base64"), let bytes = Base64.decode(text) else {
                throw fail("\(path).base64", "not base64")
            }
            return .send(.binary(bytes), delay: delay)
        case "close":
            let code = try integer(object["close"], at: "\(path).close", in: 1000...4999) ?? 1000
            guard WebSocketClose.isSendable(code) else {
                throw fail(
                    "\(path).close", "\(code) is not a close code a server sends: 1000 to 1003, 1007 to 1014, or 3000 to 4999")
            }
            let reason = try string(object["reason"], at: "\(path).reason") ?? ""
            guard reason.utf8.count <= 123 else { throw fail("\(path).reason", "a close reason is at most 123 bytes") }
            return .close(WebSocketClose(code: UInt16(code), reason: reason), delay: delay)
        default:
            guard try bool(object["drop"], at: "\(path).drop") == true else { throw fail("\(path).drop", "expected true") }
            return .drop(delay: delay)
        }
    }

    /// A string naming one case of `type`.
    func choice<T: RawRepresentable & CaseIterable>(
        _ value: JSON?, at path: String, of type: T.Type
    ) throws(ConfigurationError) -> T? where T.RawValue == String {
        guard let text = try string(value, at: path) else { return nil }
        guard let chosen = T(rawValue: text) else {
            throw fail(path, "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), found \"\(text)\"")
        }
        return chosen
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
