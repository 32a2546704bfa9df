public import Foundation
public import HTTPTypes
public import HammockJSON

/// A request the mock makes of its own after it answers one: the webhook a payment provider sends when
/// an order is paid, the callback an API document promises.
///
/// ```swift
/// server.setWebhooks([
///     try Webhook(
///         "order-paid", on: "POST /orders", url: "http://127.0.0.1:9000/hooks",
///         headers: ["X-Event": "order.paid"],
///         body: ["event": "order.paid", "order": "{{response.body.id}}", "total": "{{request.body.total}}"],
///         delay: .milliseconds(200), retries: 3)
/// ])
/// ```
/// It follows a route as a ``Fault`` names one (`POST /orders`, `/people/:id`, `*`), and fires after the
/// route answered with a status in ``statuses`` (2xx by default). Its URL, header values and body are
/// templates with the placeholders of a stub (`{{request.body.total}}`, `{{path.id}}`, `{{uuid}}`, `{{now}}`),
/// and the answer's: `{{response.body.PATH}}`, `{{response.status}}`, `{{response.headers.NAME}}`.
/// After ``delay`` it is sent; a failure (no connection, a timeout, a 5xx or a 429) is tried again up to
/// ``retries`` times, waiting ``backoff``, then twice that, and so on (at most a minute). Waits are on the
/// server's clock, so a test moves time instead of sleeping. Every attempt is a ``JournalEntry`` whose
/// ``JournalEntry/webhook`` says which, and an `event: webhook` on the events stream.
///
/// A webhook goes only to this machine (`localhost`, `127.x.x.x`, `::1`) unless the host is allowed
/// (``MockServer/allowWebhookHosts(_:)``, `hammock serve --allow-upstream HOST`): a configuration from a
/// third party must not make the mock call a host of its choosing, nor a callback URL from a request body.
public struct Webhook: Sendable, Hashable {
    /// Its name: 1 to 64 of `A-Z a-z 0-9 . _ -`, unique among a server's webhooks.
    public var name: String
    /// The route it follows, as ``Fault/route`` writes it.
    public var route: String { trigger.route }
    /// The statuses of the route's answer it fires on.
    public var statuses: ClosedRange<Int>
    /// The method it sends with.
    public var method: HTTPRequest.Method
    /// Where it is sent: an `http` or `https` URL, a template.
    public var url: String
    /// Header fields it sends, their values templates. `Content-Type: application/json` is added to a
    /// JSON body unless given.
    public var headers: [String: String]
    /// Its body, a JSON template; none when `nil`.
    public var body: JSON?
    /// How long after the answer it is sent.
    public var delay: Duration
    /// How many more times a failed delivery is tried.
    public var retries: Int
    /// The wait before the first retry; each next one waits twice the one before, at most a minute.
    public var backoff: Duration
    /// The route matcher: a fault's route, whose effect is never used.
    let trigger: Fault

    /// The most retries a webhook may ask for.
    public static let mostRetries = 10
    /// The longest delay before a delivery: ten minutes.
    public static let longestDelay = Duration.seconds(600)
    /// The longest wait between tries: a minute.
    public static let longestBackoff = Duration.seconds(60)

    /// A webhook `name` that follows `route` (`"POST /orders"`, `"/people/:id"`, `"*"`).
    /// - Throws: ``WebhookError`` for a bad name or route, a template with an unknown placeholder, a URL
    ///   (without placeholders) that is not `http` or `https`, a status range outside 100 to 599, or a
    ///   delay, retry count or backoff out of range.
    public init(
        _ name: String, on route: String, method: HTTPRequest.Method = .post, url: String,
        headers: [String: String] = [:], body: JSON? = nil, statuses: ClosedRange<Int> = 200...299,
        delay: Duration = .zero, retries: Int = 0, backoff: Duration = .seconds(1)
    ) throws(WebhookError) {
        do throws(FaultError) {
            try Fault.checkName(name)
            trigger = try Fault(route, effect: .status(200))
        } catch {
            throw WebhookError(error.message, key: error.key == "route" ? "on" : "name")
        }
        guard (100...599).contains(statuses.lowerBound), (100...599).contains(statuses.upperBound) else {
            throw WebhookError("the statuses \(statuses) are not within 100 to 599", key: "statuses")
        }
        do throws(StubError) {
            _ = try StubTemplate.pieces(of: url)
            for (field, value) in headers {
                guard HTTPField.Name(field) != nil else {
                    throw StubError("'\(field.prefix(100))' is not a header field name")
                }
                _ = try StubTemplate.pieces(of: value)
            }
            if let body { try StubTemplate.validate(body) }
        } catch {
            throw WebhookError(error.description, key: "url")
        }
        if !StubTemplate.mayHavePlaceholder(url) {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                parsed.host?.isEmpty == false
            else {
                throw WebhookError("'\(url.prefix(200))' is not an http or https URL", key: "url")
            }
        }
        guard (.zero...Self.longestDelay).contains(delay) else {
            throw WebhookError("a delay must be from 0 to 600 seconds", key: "delay")
        }
        guard (0...Self.mostRetries).contains(retries) else {
            throw WebhookError("retries must be from 0 to \(Self.mostRetries)", key: "retries")
        }
        guard (.zero...Self.longestBackoff).contains(backoff) else {
            throw WebhookError("a backoff must be from 0 to 60 seconds", key: "backoff")
        }
        self.name = name
        self.statuses = statuses
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.delay = delay
        self.retries = retries
        self.backoff = backoff
    }

    /// The wait before try `attempt` (2 is the first retry): ``backoff`` doubled for each retry before it,
    /// at most ``longestBackoff``.
    func wait(before attempt: Int) -> Duration {
        var wait = backoff
        for _ in 0..<max(attempt - 2, 0) {
            wait *= 2
            if wait >= Self.longestBackoff { return Self.longestBackoff }
        }
        return min(wait, Self.longestBackoff)
    }

    /// Whether it follows the answer `status` to a request with `method` that the router matched to `route`.
    func follows(_ method: HTTPRequest.Method, route: MatchedRoute, path: String, status: Int) -> Bool {
        statuses.contains(status) && trigger.matches(method, route: route, path: path)
    }
}

/// Why a webhook cannot be made, and the key of its configuration that says so.
public struct WebhookError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The member of the webhook's configuration object at fault (`url`, `retries`, …).
    public var key: String?

    /// An error saying `message` about `key`.
    public init(_ message: String, key: String? = nil) {
        self.message = message
        self.key = key
    }

    /// `url: 'ftp://x' is not an http or https URL`.
    public var description: String { key.map { "\($0): \(message)" } ?? message }
}

/// What sends a webhook's requests: HammockProxy's `WebhookClient` (AsyncHTTPClient), which
/// `hammock serve` uses, or your own (a test's, to see what would be sent without a socket).
public protocol WebhookTransport: Sendable {
    /// Sends `request` and returns the answer, its body up to a bound of the transport's choosing.
    /// Throws when no answer came (no connection, a timeout).
    func send(_ request: WebhookRequest) async throws -> WebhookAnswer
}

/// A webhook's request, rendered.
public struct WebhookRequest: Sendable, Hashable {
    /// The method.
    public var method: HTTPRequest.Method
    /// Where it goes: an `http` or `https` URL of a host the server may send to.
    public var url: URL
    /// Its header fields, `User-Agent` and (for a JSON body) `Content-Type` included.
    public var headerFields: HTTPFields
    /// Its body.
    public var body: [UInt8]

    /// A request.
    public init(method: HTTPRequest.Method, url: URL, headerFields: HTTPFields, body: [UInt8]) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
    }
}

/// What the receiver of a webhook answered.
public struct WebhookAnswer: Sendable, Hashable {
    /// The status.
    public var status: HTTPResponse.Status
    /// Its header fields.
    public var headerFields: HTTPFields
    /// Its body, up to the transport's bound.
    public var body: [UInt8]

    /// An answer.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
    }
}

/// Which webhook a journal entry is an attempt of (``JournalEntry/webhook``).
public struct WebhookAttempt: Sendable, Hashable {
    /// The webhook's name.
    public var name: String
    /// The try: 1 for the first.
    public var attempt: Int
    /// Where it went.
    public var url: String
    /// Why no answer counts (no connection, a refused host, a 5xx that will be tried again); `nil` when
    /// the receiver answered 2xx to 4xx but 429.
    public var error: String?

    /// An attempt's description.
    public init(name: String, attempt: Int, url: String, error: String? = nil) {
        self.name = name
        self.attempt = attempt
        self.url = url
        self.error = error
    }
}
