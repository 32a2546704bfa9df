import HTTPTypes
import HammockJSON

extension AdminRoutes {
    /// The most webhooks the admin API puts in force, as with faults.
    static let webhookLimit = 1_000

    /// `<prefix>/webhooks`: list (GET), add one (POST, 201 with its `Location`; 409 for a name in force),
    /// replace all (PUT, the configuration file's array), none (DELETE).
    static func webhooks(_ call: Call) throws -> MockResponse {
        let server = call.server
        switch call.request.method {
        case .post:
            let webhook = try webhook(from: call.request, named: nil)
            try server.runtimeCell.change { (settings) throws(HTTPProblem) in
                guard !settings.webhooks.contains(where: { $0.name == webhook.name }) else {
                    throw HTTPProblem(
                        .conflict,
                        detail:
                            "A webhook named '\(webhook.name)' is in force; PUT \(call.admin.path)/webhooks/\(webhook.name) replaces it"
                    )
                }
                guard settings.webhooks.count < webhookLimit else {
                    throw HTTPProblem(.conflict, detail: "The server keeps at most \(webhookLimit) webhooks; remove one first")
                }
                settings.webhooks.append(webhook)
            }
            var response = MockResponse(status: .created, json: webhook.json)
            response.headerFields[.location] = "\(call.admin.path)/webhooks/\(webhook.name)"
            return response
        case .put:
            guard case .array(let elements) = try jsonBody(of: call.request) else {
                throw HTTPProblem.badRequest(
                    "Expected an array of webhooks: [{\"name\": \"paid\", \"on\": \"POST /orders\", \"url\": \"http://…\"}]")
            }
            guard elements.count <= webhookLimit else {
                throw HTTPProblem(.conflict, detail: "The server keeps at most \(webhookLimit) webhooks")
            }
            var webhooks: [Webhook] = []
            for (index, element) in elements.enumerated() {
                do throws(WebhookError) {
                    webhooks.append(try Webhook(json: element))
                } catch {
                    throw HTTPProblem.badRequest("[\(index)].\(error.description)")
                }
            }
            do throws(WebhookError) {
                try server.setWebhooks(webhooks)
            } catch {
                throw HTTPProblem.badRequest(error.description)
            }
        case .delete:
            try? server.setWebhooks([])
        default:
            break
        }
        return MockResponse(json: .array(server.webhooks.map(\.json)))
    }

    /// `<prefix>/webhooks/{name}`: read it (GET), put it in force (PUT: 201 when new, 200 when it replaced
    /// that name's), take it out (DELETE, 404 if none has the name).
    static func webhook(_ call: Call) throws -> MockResponse {
        let (server, name) = (call.server, call.parameters[0])
        switch call.request.method {
        case .put:
            let webhook = try webhook(from: call.request, named: name)
            let isNew = try server.runtimeCell.change { (settings) throws(HTTPProblem) -> Bool in
                if let index = settings.webhooks.firstIndex(where: { $0.name == name }) {
                    settings.webhooks[index] = webhook
                    return false
                }
                guard settings.webhooks.count < webhookLimit else {
                    throw HTTPProblem(.conflict, detail: "The server keeps at most \(webhookLimit) webhooks; remove one first")
                }
                settings.webhooks.append(webhook)
                return true
            }
            var response = MockResponse(status: isNew ? .created : .ok, json: webhook.json)
            if isNew { response.headerFields[.location] = "\(call.admin.path)/webhooks/\(name)" }
            return response
        case .delete:
            let removed = server.runtimeCell.change { settings -> Bool in
                let before = settings.webhooks.count
                settings.webhooks.removeAll { $0.name == name }
                return settings.webhooks.count != before
            }
            guard removed else { throw HTTPProblem.notFound("No webhook named '\(name.prefix(64))'") }
            return MockResponse(status: .noContent)
        default:
            guard let webhook = server.webhooks.first(where: { $0.name == name }) else {
                throw HTTPProblem.notFound("No webhook named '\(name.prefix(64))'")
            }
            return MockResponse(json: webhook.json)
        }
    }

    /// One webhook from a request's body; `named` is the path's name, which a `name` in the body, if any,
    /// must equal.
    static func webhook(from request: MockRequest, named pathName: String?) throws -> Webhook {
        var body = try jsonBody(of: request)
        if let pathName, case .object(var object) = body {
            if case .string(let given)? = object["name"], given != pathName {
                throw HTTPProblem.badRequest("name: '\(given.prefix(64))' differs from the path's '\(pathName.prefix(64))'")
            }
            object["name"] = .string(pathName)
            body = .object(object)
        }
        do throws(WebhookError) {
            return try Webhook(json: body)
        } catch {
            throw HTTPProblem.badRequest(error.description)
        }
    }
}

extension Webhook {
    /// As the configuration file and `<prefix>/webhooks` write it.
    public var json: JSON {
        func milliseconds(_ duration: Duration) -> JSON {
            let (seconds, attoseconds) = duration.components
            return .integer(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
        }
        var object: JSONObject = [
            "name": .string(name), "on": .string(route), "method": .string(method.rawValue), "url": .string(url),
            "statuses": [.integer(statuses.lowerBound), .integer(statuses.upperBound)], "delay": milliseconds(delay),
            "retries": .integer(retries), "backoff": milliseconds(backoff),
        ]
        if !headers.isEmpty {
            var fields = JSONObject()
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { fields[name] = .string(value) }
            object["headers"] = .object(fields)
        }
        if let body { object["body"] = body }
        return .object(object)
    }
}
