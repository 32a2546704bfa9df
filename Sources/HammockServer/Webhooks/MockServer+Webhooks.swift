extension MockServer {
    /// The webhooks in force, in the order they were given.
    public var webhooks: [Webhook] { runtimeCell.runtime.settings.webhooks }

    /// Puts `webhooks` in force instead of those before, from the next answer on.
    /// - Throws: ``WebhookError`` when two share a name.
    public func setWebhooks(_ webhooks: [Webhook]) throws(WebhookError) {
        var names = Set<String>()
        for webhook in webhooks where !names.insert(webhook.name).inserted {
            throw WebhookError("'\(webhook.name)' names two webhooks; names are unique", key: "name")
        }
        runtimeCell.change { $0.webhooks = webhooks }
    }

    /// Sends webhooks through `transport` (HammockProxy's `WebhookClient` over HTTP, or a test's own);
    /// without one, each attempt is journaled as not sent.
    public func setWebhookTransport(_ transport: (any WebhookTransport)?) { webhookDispatcher.transport = transport }

    /// Lets webhooks go to these hosts besides this machine's own names (`localhost`, `127.x.x.x`, `::1`).
    public func allowWebhookHosts(_ hosts: some Sequence<String>) {
        webhookDispatcher.allow(hosts.map { $0.lowercased() })
    }

    /// Deliveries started and not yet over (waiting their delay or a retry, or being sent).
    public var pendingWebhookDeliveries: Int { webhookDispatcher.pending }
}
