public import HTTPTypes
public import HammockJSON

extension Webhook {
    static let keys = ["name", "on", "method", "url", "headers", "body", "statuses", "delay", "retries", "backoff"]

    /// A webhook from JSON, the shape of a configuration file's `webhooks`:
    ///
    /// ```json
    /// {"name": "order-paid", "on": "POST /orders", "url": "http://127.0.0.1:9000/hooks",
    ///  "headers": {"X-Event": "order.paid"}, "body": {"order": "{{response.body.id}}"},
    ///  "statuses": "2xx", "delay": 200, "retries": 3, "backoff": 500}
    /// ```
    /// `method` is `POST` unless given; `statuses` a class (`"2xx"`), a code, or `[from, to]`; `delay` and
    /// `backoff` are milliseconds.
    /// - Throws: ``WebhookError`` naming the key.
    public init(json: JSON) throws(WebhookError) {
        guard case .object(let object) = json else {
            throw WebhookError("expected a webhook: {\"name\": \"paid\", \"on\": \"POST /orders\", \"url\": \"http://…\"}")
        }
        for key in object.keys where !Self.keys.contains(key) {
            throw WebhookError("unknown key; expected one of \(Self.keys.joined(separator: ", "))", key: key)
        }
        guard case .string(let name)? = object["name"] else { throw WebhookError("missing; a name for the webhook", key: "name") }
        guard case .string(let route)? = object["on"] else {
            throw WebhookError("missing; the route it follows, as \"POST /orders\"", key: "on")
        }
        guard case .string(let url)? = object["url"] else { throw WebhookError("missing; where it is sent", key: "url") }
        var method = HTTPRequest.Method.post
        if let value = object["method"] {
            guard case .string(let text) = value, let parsed = HTTPRequest.Method(text.uppercased()) else {
                throw WebhookError("expected an HTTP method", key: "method")
            }
            method = parsed
        }
        var headers: [String: String] = [:]
        if let value = object["headers"] {
            guard case .object(let fields) = value else { throw WebhookError("expected an object of strings", key: "headers") }
            for (field, value) in fields {
                guard case .string(let text) = value else { throw WebhookError("'\(field)' is not a string", key: "headers") }
                headers[field] = text
            }
        }
        let statuses = try Self.statuses(object["statuses"])
        func milliseconds(_ key: String, default fallback: Duration) throws(WebhookError) -> Duration {
            guard let value = object[key] else { return fallback }
            guard let number = value.doubleValue, number.isFinite, number >= 0, number <= 3_600_000 else {
                throw WebhookError("expected milliseconds", key: key)
            }
            return .milliseconds(Int64(number.rounded()))
        }
        var retries = 0
        if let value = object["retries"] {
            guard let count = value.intValue else { throw WebhookError("expected a whole number", key: "retries") }
            retries = count
        }
        try self.init(
            name, on: route, method: method, url: url, headers: headers, body: object["body"], statuses: statuses,
            delay: try milliseconds("delay", default: .zero), retries: retries,
            backoff: try milliseconds("backoff", default: .seconds(1)))
    }

    /// `"2xx"`, `201`, or `[200, 204]`; 2xx when absent.
    static func statuses(_ value: JSON?) throws(WebhookError) -> ClosedRange<Int> {
        switch value {
        case nil, .null?:
            return 200...299
        case .string(let text)?:
            let lowered = text.lowercased()
            guard lowered.count == 3, lowered.hasSuffix("xx"), let first = lowered.first?.wholeNumberValue,
                (1...5).contains(first)
            else { throw WebhookError("expected a class such as \"2xx\", a code, or [from, to]", key: "statuses") }
            return first * 100...first * 100 + 99
        case .array(let bounds)? where bounds.count == 2:
            guard let low = bounds[0].intValue, let high = bounds[1].intValue, low <= high else {
                throw WebhookError("expected [from, to] with from at most to", key: "statuses")
            }
            return low...high
        case let other?:
            guard let code = other.intValue else {
                throw WebhookError("expected a class such as \"2xx\", a code, or [from, to]", key: "statuses")
            }
            return code...code
        }
    }
}
