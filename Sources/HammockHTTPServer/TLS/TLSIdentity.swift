import NIOCore
import NIOSSL

/// What the server proves itself with over TLS: a certificate chain (the server's own first) and its
/// private key, both PEM. ``LocalCertificateAuthority/issue(for:now:)`` makes one for this machine's names;
/// a team's own comes from its files (`hammock serve --cert FILE --key FILE`).
///
/// ```swift
/// let authority = try LocalCertificateAuthority.loadOrCreate()
/// try await server.start(port: 8443, tls: try authority.issue(for: ["localhost", "127.0.0.1", "::1"]))
/// ```
public struct TLSIdentity: Sendable {
    /// Why a certificate or key cannot be served with.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String

        /// A failure saying `description`.
        public init(description: String) { self.description = description }
    }

    /// The certificates, the server's first, as PEM.
    public let certificateChainPEM: String
    /// Whether clients may choose HTTP/2 (by ALPN, as browsers, curl, URLSession and AsyncHTTPClient do)
    /// besides HTTP/1.1. On by default; off, every client speaks HTTP/1.1.
    public var offersHTTP2 = true
    /// The contexts connections are served with: one offering `h2` and `http/1.1`, one `http/1.1` alone.
    private let contexts: (http2: NIOSSLContext, http1: NIOSSLContext)

    /// The context for ``offersHTTP2``.
    var context: NIOSSLContext { offersHTTP2 ? contexts.http2 : contexts.http1 }

    /// An identity from PEM text: one or more certificates, and the first one's private key.
    /// - Throws: ``Failure`` when either cannot be read, or the key is not the certificate's.
    public init(certificateChainPEM: String, privateKeyPEM: String) throws(Failure) {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8))
        } catch {
            throw Failure(description: "the certificate cannot be read as PEM: \(error)")
        }
        guard !chain.isEmpty else { throw Failure(description: "the certificate file holds no certificate") }
        do {
            key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        } catch {
            throw Failure(description: "the private key cannot be read as PEM (unencrypted PKCS#8, SEC1 or PKCS#1): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        // TLS 1.2 at least (what App Transport Security requires). The protocols in the server's order of
        // preference: a client that offers both gets HTTP/2.
        configuration.minimumTLSVersion = .tlsv12
        // How long a close waits for the client's close_notify before closing anyway: NIOSSL's 5 s made a
        // stop with 20 silent kept-alive clients (a browser's idle connections) take 5.0 s where plain
        // HTTP takes none. What the answers said is already sent when the server's close_notify goes.
        configuration.shutdownTimeout = .seconds(1)
        var http1 = configuration
        configuration.applicationProtocols = ["h2", "http/1.1"]
        http1.applicationProtocols = ["http/1.1"]
        do {
            contexts = (try NIOSSLContext(configuration: configuration), try NIOSSLContext(configuration: http1))
        } catch {
            throw Failure(
                description: "the certificate and key cannot be served together (is the key the certificate's?): \(error)")
        }
        self.certificateChainPEM = certificateChainPEM
    }
}
