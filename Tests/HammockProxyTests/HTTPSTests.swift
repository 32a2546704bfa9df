import AsyncHTTPClient
import Foundation
import HammockHTTPServer
import HammockJSON
import HammockProxy
import HammockServer
import HammockTestSupport
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// The mock over HTTPS with a certificate authority of this machine's own, checked by clients no one
/// here wrote (curl and OpenSSL, AsyncHTTPClient), and the proxy reaching an HTTPS backend (httpbin under
/// gunicorn's TLS) whose certificate chains to a root the system does not know.
@Suite("HTTPS: the local authority, the mock over TLS, an HTTPS backend", .timeLimit(.minutes(2)))
struct HTTPSTests {
    static func write(_ text: String, _ name: String) throws -> String {
        let path = TemporaryFiles.path(name, extension: "pem")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An AsyncHTTPClient that trusts `rootPEM` (or only the system's roots), shut down after `body`;
    /// it speaks HTTP/2 where the server agrees, unless `http1Only`.
    /// `connectTimeout` bounds the TCP connect and the TLS handshake together.
    static func withClient<T>(
        trusting rootPEM: String?, http1Only: Bool = false, connectTimeout: TimeAmount = .seconds(10),
        _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let rootPEM { tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(rootPEM.utf8)))] }
        // 10 s: a handshake in a debug build of BoringSSL, in a full test run on two loaded cores, took
        // over 2 s (a connectTimeout in HTTP2Tests' request-timeout test, 2026-12-01).
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, timeout: HTTPClient.Configuration.Timeout(connect: connectTimeout))
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    @Test("The mock over HTTPS answers a client that trusts the local authority; curl agrees, and one that does not is refused")
    func serving() async throws {
        let authority = try LocalCertificateAuthority.make()
        let server = try await MockServer(resources: [MockResource("people", fields: ["name": .string])])
        _ = try await server.addData([["name": "Ada"]], for: "people")
        let port = try await server.start(port: 0, tls: try authority.issue(for: ["localhost", "127.0.0.1"]))
        do {
            #expect(await server.baseURL?.absoluteString == "https://127.0.0.1:\(port)")
            let answer = try await Self.withClient(trusting: authority.certificatePEM) { client in
                let response = try await client.execute(
                    HTTPClientRequest(url: "https://localhost:\(port)/people/1"), timeout: .seconds(10))
                return (response.status.code, try await response.body.collect(upTo: 1 << 20))
            }
            #expect(answer.0 == 200)
            #expect(try JSON(parsing: Array(answer.1.readableBytesView))["name"] == "Ada")
            // A client that trusts only the system's roots stops at the handshake.
            await #expect(throws: (any Error).self) {
                // A refused handshake is retried until the connect timeout, and shutdown waits for it.
                try await Self.withClient(trusting: nil, connectTimeout: .seconds(2)) { client in
                    _ = try await client.execute(
                        HTTPClientRequest(url: "https://127.0.0.1:\(port)/people/1"), timeout: .seconds(2))
                }
            }
            let root = try Self.write(authority.certificatePEM, "root")
            let (body, status) = try await runToEnd(["curl", "-s", "--cacert", root, "https://127.0.0.1:\(port)/people/1"])
            #expect(status == 0 && body.contains("\"Ada\""))
            let (_, refused) = try await runToEnd(["curl", "-s", "https://127.0.0.1:\(port)/people/1"])
            #expect(refused == 60)  // curl: the peer's certificate cannot be authenticated
            // Plain HTTP to the HTTPS port: a 400 that says so, not a reset to guess at.
            let (plain, plainStatus) = try await runToEnd(["curl", "-s", "-i", "http://127.0.0.1:\(port)/people/1"])
            #expect(plainStatus == 0 && plain.hasPrefix("HTTP/1.1 400"))
            #expect(plain.contains("This port speaks HTTPS"))
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test(
        "The authority is made once, its key owner-only in an owner-only folder, and read back the same; a damaged one is not replaced"
    )
    func authorityOnDisk() async throws {
        let folder = TemporaryFiles.directory("ca") + "hammock"
        let made = try LocalCertificateAuthority.loadOrCreate(in: folder)
        let again = try LocalCertificateAuthority.loadOrCreate(in: folder)
        #expect(made.fingerprint == again.fingerprint && made.certificatePEM == again.certificatePEM)
        let manager = FileManager.default
        func mode(_ path: String) throws -> Int? {
            (try manager.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(folder) == 0o700)
        #expect(try mode(folder + "/" + LocalCertificateAuthority.keyFile) == 0o600)
        // OpenSSL reads the root as a CA, and verifies a leaf it issued.
        let leaf = try made.issuePEM(for: ["localhost", "127.0.0.1", "::1", "mock.test"])
        let leafFile = try Self.write(leaf.certificateChain, "leaf")
        let (out, verified) = try await runToEnd(
            ["openssl", "verify", "-CAfile", folder + "/" + LocalCertificateAuthority.certificateFile, leafFile])
        #expect(verified == 0 && out.contains(": OK"))
        let (text, _) = try await runToEnd(["openssl", "x509", "-in", leafFile, "-noout", "-text"])
        #expect(text.contains("DNS:localhost") && text.contains("IP Address:127.0.0.1") && text.contains("DNS:mock.test"))
        #expect(text.contains("TLS Web Server Authentication"))
        // A damaged key is an error that says what to remove, and the files stay as they were.
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: folder + "/" + LocalCertificateAuthority.keyFile))
        let error = #expect(throws: LocalCertificateAuthority.Failure.self) {
            try LocalCertificateAuthority.loadOrCreate(in: folder)
        }
        #expect(error?.description.contains("remove") == true)
        #expect(try String(contentsOfFile: folder + "/" + LocalCertificateAuthority.keyFile, encoding: .utf8) == "not a key")
        #expect(throws: LocalCertificateAuthority.Failure.self) { try made.issue(for: ["not a name!"]) }
        #expect(throws: LocalCertificateAuthority.Failure.self) { try made.issue(for: []) }
    }

    @Test("A request proxied from the mock's HTTPS port says proto=https in its Forwarded element, over HTTP/1.1 and HTTP/2")
    func forwardedScheme() async throws {
        try await withHTTPBin { upstream in
            let authority = try LocalCertificateAuthority.make()
            let server = try await MockServer(resources: [])
            server.addRoutes(try ProxyRoutes(upstream: upstream), first: false)
            let port = try await server.start(port: 0, tls: try authority.issue(for: ["127.0.0.1"]))
            do {
                for http1Only in [true, false] {
                    let forwarded = try await Self.withClient(trusting: authority.certificatePEM, http1Only: http1Only) {
                        client in
                        // `show_env`: httpbin hides Forwarded from its answer otherwise.
                        let response = try await client.execute(
                            HTTPClientRequest(url: "https://127.0.0.1:\(port)/headers?show_env=1"), timeout: .seconds(10))
                        let body = try JSON(parsing: Array(try await response.body.collect(upTo: 1 << 20).readableBytesView))
                        return body["headers"]?["Forwarded"]?.stringValue
                    }
                    #expect(forwarded?.hasSuffix(";proto=https") == true, "\(forwarded ?? "none"), HTTP/1.1 only: \(http1Only)")
                }
                // In process, nothing came over TLS.
                let direct = await server.respond(to: MockRequest(.get, "/headers?show_env=1"))
                let body = try JSON(parsing: try await direct.stream?.collect() ?? direct.body)
                #expect(body["headers"]?["Forwarded"]?.stringValue?.hasSuffix(";proto=http") == true)
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }
    }

    @Test("The proxy reaches an HTTPS backend whose root it is given, and answers 502 naming it without that root")
    func httpsUpstream() async throws {
        let authority = try LocalCertificateAuthority.make(commonName: "Staging CA")
        let leaf = try authority.issuePEM(for: ["127.0.0.1"])
        let certificate = try Self.write(leaf.certificateChain, "upstream")
        let key = try Self.write(leaf.privateKey, "upstream-key")
        try await withHTTPBin(certificateFile: certificate, keyFile: key) { upstream in
            #expect(upstream.scheme == "https")
            let trusted = try await MockServer(resources: [])
            trusted.addRoutes(try ProxyRoutes(upstream: upstream, upstreamRootsPEM: authority.certificatePEM), first: false)
            let got = await trusted.respond(to: MockRequest(.get, "/get?over=tls"))
            #expect(got.status == .ok, "\(String(decoding: got.body, as: UTF8.self))")
            let echoed = try JSON(parsing: try await got.stream?.collect() ?? got.body)
            #expect(echoed["args"]?["over"] == "tls")
            let untrusted = try await MockServer(resources: [])
            untrusted.addRoutes(try ProxyRoutes(upstream: upstream), first: false)
            let refused = await untrusted.respond(to: MockRequest(.get, "/get"))
            #expect(refused.status == .badGateway)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("could not be reached"))
        }
        #expect(throws: ProxyRoutes.ConfigurationError.self) {
            try ProxyRoutes(upstream: URL(string: "https://127.0.0.1:1")!, upstreamRootsPEM: "not a certificate")
        }
    }
}
