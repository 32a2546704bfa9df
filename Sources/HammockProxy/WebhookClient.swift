import AsyncHTTPClient
import Foundation
import HTTPTypes
public import HammockServer
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Sends a mock's webhooks over HTTP with AsyncHTTPClient: what `hammock serve` uses.
///
/// ```swift
/// server.setWebhookTransport(WebhookClient())
/// ```
/// Each attempt has `timeout` to be answered, body included; redirects are not followed (a receiver that
/// moved says so in the journal); an answer's body is read up to 64 KiB, and the rest is never read. It
/// trusts the system's roots, and `trustedRootsPEM` beside them (a receiver with a certificate of the
/// mock's own authority).
public struct WebhookClient: WebhookTransport {
    /// How long an attempt may take, connection and the answer's body included.
    public var timeout: Duration
    let roots: [NIOSSLCertificate]
    let rootsPEM: String

    /// The most of an answer's body kept.
    public static let bodyLimit = 64 << 10

    /// A client; `trustedRootsPEM` adds roots beside the system's.
    /// - Throws: ``ProxyRoutes/ConfigurationError`` when the PEM holds no certificate.
    public init(timeout: Duration = .seconds(10), trustedRootsPEM: String? = nil) throws(ProxyRoutes.ConfigurationError) {
        self.timeout = timeout
        if let trustedRootsPEM {
            do {
                roots = try NIOSSLCertificate.fromPEMBytes(Array(trustedRootsPEM.utf8))
            } catch {
                throw ProxyRoutes.ConfigurationError(description: "the trusted roots are not PEM certificates: \(error)")
            }
            guard !roots.isEmpty else {
                throw ProxyRoutes.ConfigurationError(description: "the trusted roots hold no certificate")
            }
            rootsPEM = trustedRootsPEM
        } else {
            roots = []
            rootsPEM = ""
        }
    }

    /// Sends `request`; throws when no answer came within ``timeout``.
    public func send(_ request: WebhookRequest) async throws -> WebhookAnswer {
        // The proxy's clients, kept for the process: one that trusts the system's roots, or one per set
        // of extra roots.
        let client: HTTPClient
        if roots.isEmpty {
            client = ProxyRoutes.clients[0].client
        } else {
            let (roots, pem) = (self.roots, rootsPEM)
            client = ProxyRoutes.trustingClients.withLock { sets in
                if let existing = sets[pem] { return existing[0].client }
                let made = ProxyRoutes.makeClients(trusting: roots)
                sets[pem] = made
                return made[0].client
            }
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if !request.body.isEmpty { outgoing.body = .bytes(ByteBuffer(bytes: request.body)) }
        let deadline = ContinuousClock.now + timeout
        let (seconds, attoseconds) = timeout.components
        let response = try await client.execute(
            outgoing, timeout: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        var fields = HTTPFields()
        for header in response.headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        let body = try await Self.readBody(response.body, until: deadline)
        return WebhookAnswer(status: HTTPResponse.Status(code: Int(response.status.code)), headerFields: fields, body: body)
    }

    /// An answer's body up to ``bodyLimit``, read until `deadline` at the latest: AsyncHTTPClient's timeout
    /// ends with the head, and a receiver that sent without end (or a byte a second) held a delivery, and
    /// its connection, for as long as it liked. Leaving the body unread ends the request (AsyncHTTPClient
    /// cancels it when its body sequence is dropped); what came in time is kept.
    static func readBody(
        _ stream: HTTPClientResponse.Body, until deadline: ContinuousClock.Instant
    ) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var body: [UInt8] = []
                do {
                    for try await piece in stream {
                        body += piece.readableBytesView.prefix(bodyLimit - body.count)
                        if body.count >= bodyLimit { break }
                    }
                } catch {
                    // The deadline passed: the part that came is the answer's. Any other failure is the attempt's.
                    guard Task.isCancelled else { throw error }
                }
                return body
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            while let result = try await group.next() {
                if let body = result {
                    group.cancelAll()
                    return body
                }
                group.cancelAll()  // the deadline: the reader stops and returns what it has
            }
            return []
        }
    }
}
