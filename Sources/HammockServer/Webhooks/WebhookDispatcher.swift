import Foundation
import HTTPTypes
import HammockJSON
import HammockStore
import HammockWire
import Synchronization

/// Sends a server's webhooks: renders each one that follows an answer, waits its delay on the server's
/// clock, sends it through the transport, tries again as it says, and journals every attempt. Each
/// delivery is a task of its own, so an answer never waits for one; ``MockServer/stop()`` cancels those
/// still waiting.
final class WebhookDispatcher: Sendable {
    struct State {
        var transport: (any WebhookTransport)?
        var allowedHosts: Set<String> = []
        var deliveries: [Int: Task<Void, Never>] = [:]
        var nextDelivery = 0
    }

    let journal: RequestJournal
    /// The server's base path, which routes (and so webhooks' `on`) are written without.
    let basePath: String?
    let state = Mutex(State())

    init(journal: RequestJournal, basePath: String?) {
        self.journal = journal
        self.basePath = basePath
    }

    var transport: (any WebhookTransport)? {
        get { state.withLock { $0.transport } }
        set { state.withLock { $0.transport = newValue } }
    }

    /// Lets webhooks go to `hosts` too.
    func allow(_ hosts: [String]) { state.withLock { $0.allowedHosts.formUnion(hosts) } }

    /// Deliveries started and not yet over.
    var pending: Int { state.withLock { $0.deliveries.count } }

    /// Starts the deliveries of the webhooks among `webhooks` that follow `response` to `request`.
    func answered(_ request: MockRequest, with response: MockResponse, webhooks: [Webhook]) {
        // A webhook's own request (this mock's, or another Hammock's) fires none: a webhook to a route
        // it follows would otherwise call itself for ever.
        guard let route = request.context?.route, request.headerFields[Self.marker] == nil else { return }
        let code = response.status.code
        // Matched as the router matched it: the path under the base path.
        var path = request.path
        if let basePath, path.hasPrefix(basePath) {
            path = String(path.dropFirst(basePath.count))
            if !path.hasPrefix("/") { path = "/" + path }
        }
        let following = webhooks.filter { $0.follows(request.method, route: route, path: path, status: code) }
        guard !following.isEmpty else { return }
        let context = Self.context(of: request, response: response, path: path, route: route)
        for webhook in following {
            let started = state.withLock { current -> Bool in
                guard current.deliveries.count < Self.mostPending else { return false }
                let id = current.nextDelivery
                current.nextDelivery += 1
                // Registered under the lock before the task can finish and remove itself.
                current.deliveries[id] = Task { [self] in
                    await deliver(webhook, context: context)
                    _ = state.withLock { $0.deliveries.removeValue(forKey: id) }
                }
                return true
            }
            if !started {
                let rendered = Self.render(webhook, context: context)
                journal.recordWebhook(
                    request: rendered.request, answer: nil,
                    attempt: WebhookAttempt(
                        name: webhook.name, attempt: 1, url: rendered.url,
                        error: "not sent: \(Self.mostPending) deliveries are already waiting"))
            }
        }
    }

    /// `X-Hammock-Webhook: NAME`, on every webhook sent; a request that carries it fires no webhook.
    static let marker = HTTPField.Name("X-Hammock-Webhook")!

    /// The most deliveries waiting at once (a delay, a retry, an answer): each holds the request and the
    /// answer it follows, so a client sending requests faster than a slow receiver answers would otherwise
    /// grow the server's memory without bound. Past it, an attempt is journaled as not sent.
    static let mostPending = 1_000

    /// Cancels every delivery still waiting (a stop); returns once they have ended.
    func cancelAll() async {
        let tasks = state.withLock { Array($0.deliveries.values) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// What a webhook's templates read: the request as a stub's do, and the answer.
    static func context(
        of request: MockRequest, response: MockResponse, path: String, route: MatchedRoute
    ) -> StubTemplate.Context {
        var body: JSON?
        if !request.body.isEmpty { body = try? JSON(parsing: request.body) }
        var answer: JSON?
        if response.stream == nil, !response.body.isEmpty { answer = try? JSON(parsing: response.body) }
        let query = request.query.map { text in (try? ListQuery.items(of: text)) ?? [] } ?? []
        var context = StubTemplate.Context(
            // The route's `:name` parameters, as a stub's are read (`path` is under the base path).
            parameters: (try? PathPattern(route.pattern))?.match(path) ?? [:], query: query, headers: request.headerFields,
            body: body)
        context.now = Date()
        context.response = StubTemplate.Answer(status: response.status.code, headers: response.headerFields, body: answer)
        return context
    }

    /// Sends one webhook, with its retries.
    func deliver(_ webhook: Webhook, context: StubTemplate.Context) async {
        let sleep = journal.sleep
        if webhook.delay > .zero { await sleep(webhook.delay) }
        let rendered = Self.render(webhook, context: context)
        for attempt in 1...(webhook.retries + 1) {
            if attempt > 1 { await sleep(webhook.wait(before: attempt)) }
            if Task.isCancelled { return }
            let outcome = await send(rendered, webhook: webhook)
            journal.recordWebhook(
                request: rendered.request, answer: outcome.answer,
                attempt: WebhookAttempt(name: webhook.name, attempt: attempt, url: rendered.url, error: outcome.error))
            guard outcome.tryAgain else { return }
        }
    }

    /// A webhook rendered: its request, or why there is none (a URL that is no URL once filled in).
    struct Rendered {
        var url: String
        var request: MockRequest
        var target: URL?
        var problem: String?
    }

    static func render(_ webhook: Webhook, context: StubTemplate.Context) -> Rendered {
        let url = StubTemplate.renderText(webhook.url, context)
        var fields = HTTPFields()
        for (name, value) in webhook.headers.sorted(by: { $0.key < $1.key }) {
            guard let name = HTTPField.Name(name) else { continue }
            fields[name] = StubTemplate.renderText(value, context).filter { $0 != "\r" && $0 != "\n" && $0 != "\0" }
        }
        var body: [UInt8] = []
        if let template = webhook.body {
            body = StubTemplate.render(template, context).serialized()
            if fields[.contentType] == nil { fields[.contentType] = "application/json" }
        }
        // Escaped once where a rendered value put what a URL cannot hold (`{{request.body.name}}` as `a|b`):
        // left to `URL(string:)`, every `%XX` of the template was escaped again.
        let target = URL(string: PercentEncoding.encodeURLText(url))
        var problem: String?
        if let target, let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme), target.host?.isEmpty == false
        {
            problem = nil
        } else {
            problem = "'\(url.prefix(200))' is not an http or https URL"
        }
        let path = target.map { $0.path(percentEncoded: true).isEmpty ? "/" : $0.path(percentEncoded: true) } ?? "/"
        var request = MockRequest(webhook.method, path, headerFields: fields, body: body)
        request.query = target?.query(percentEncoded: true)
        return Rendered(url: url, request: request, target: problem == nil ? target : nil, problem: problem)
    }

    struct Outcome {
        var answer: WebhookAnswer?
        var error: String?
        var tryAgain: Bool
    }

    /// One attempt: refused before it leaves (a URL that is none, a host not allowed, no transport), or
    /// sent, and whether to try again (no answer, a 5xx, a 429).
    func send(_ rendered: Rendered, webhook: Webhook) async -> Outcome {
        guard let target = rendered.target else {
            return Outcome(error: rendered.problem ?? "no URL", tryAgain: false)
        }
        let host = target.host?.lowercased() ?? ""
        let (transport, allowed) = state.withLock { ($0.transport, $0.allowedHosts) }
        guard ProxyRule.isLoopback(host) || allowed.contains(host) else {
            return Outcome(
                error: "not sent: \(host.prefix(200)) is not this machine; allow it with --allow-upstream \(host.prefix(200)) "
                    + "(MockServer.allowWebhookHosts)",
                tryAgain: false)
        }
        guard let transport else {
            return Outcome(
                error:
                    "not sent: the server has no webhook transport (MockServer.setWebhookTransport; HammockProxy's WebhookClient)",
                tryAgain: false)
        }
        var request = WebhookRequest(
            method: rendered.request.method, url: target, headerFields: rendered.request.headerFields,
            body: rendered.request.body)
        request.headerFields[.userAgent] = request.headerFields[.userAgent] ?? "Hammock-Webhook/1"
        request.headerFields[Self.marker] = webhook.name
        do {
            let answer = try await transport.send(request)
            let code = answer.status.code
            if code >= 500 || code == 429 {
                return Outcome(answer: answer, error: "answered \(code)", tryAgain: true)
            }
            return Outcome(answer: answer, error: nil, tryAgain: false)
        } catch {
            return Outcome(error: "no answer: \(String(describing: error).prefix(300))", tryAgain: true)
        }
    }
}

/// Starts the deliveries of the webhooks that follow an answer: next to the journal, so it sees the
/// answer the client got.
struct WebhookStep: OutcomeStep {
    let dispatcher: WebhookDispatcher

    func finish(_ outcome: Result<MockResponse, any Error>, for request: MockRequest) -> Result<MockResponse, any Error> {
        if case .success(let response) = outcome, let webhooks = request.runtime?.settings.webhooks, !webhooks.isEmpty {
            dispatcher.answered(request, with: response, webhooks: webhooks)
        }
        return outcome
    }
}
