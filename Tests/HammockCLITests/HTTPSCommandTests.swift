import Foundation
import HammockTesting
import Testing

/// `hammock serve --https`, `--cert`/`--key` and `hammock trust`, checked with curl.
@Suite("hammock serve --https (end to end)", .timeLimit(.minutes(2)))
struct HTTPSCommandTests {
    /// Starts `hammock serve` with `arguments`, the authority in `folder`; its process and URL.
    static func serve(_ arguments: [String], folder: String) async throws -> (HammockProcess, String) {
        let process = try HammockProcess(
            ["serve", "Examples/people.json", "--store", "memory", "--port", "0"] + arguments,
            environment: ["HAMMOCK_CA_DIR": folder])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        let line = try #require(banner, "no banner; stderr: \(process.errorOutput.withLock { $0 })")
        return (process, try #require(line.split(separator: " ").last.map(String.init)))
    }

    @Test("--https serves with a certificate of the local authority that curl trusts through --cacert; trust shows the same file")
    func localAuthority() async throws {
        let folder = TemporaryFiles.directory("ca") + "hammock"
        let (process, url) = try await Self.serve(["--https", "--https-name", "mock.test"], folder: folder)
        #expect(url.hasPrefix("https://127.0.0.1:"))
        let root = folder + "/hammock-ca.pem"
        #expect(
            await process.firstLine {
                $0.hasPrefix("https: HTTP/2 and HTTP/1.1, a certificate from the local authority \(root)")
            } != nil)
        let (body, status) = try await runToEnd(["curl", "-s", "--cacert", root, url + "/people/1"])
        #expect(status == 0 && body.contains("Amy Lee"))
        // curl offers h2 and gets it; asked for HTTP/1.1, it gets that.
        for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
            let (agreed, _) = try await runToEnd([
                "curl", "-s", flag, "--cacert", root, "-o", "/dev/null", "-w", "%{http_version}", url + "/people/1",
            ])
            #expect(agreed == version)
        }
        // The certificate covers the names asked for: mock.test, resolved here to the server's address.
        let port = url.split(separator: ":").last.map(String.init) ?? ""
        let (named, namedStatus) = try await runToEnd(
            ["curl", "-s", "--cacert", root, "--resolve", "mock.test:\(port):127.0.0.1", "https://mock.test:\(port)/people/2"])
        #expect(namedStatus == 0 && named.contains("Jonas Novak"))
        process.interrupt()
        #expect(await process.exitStatus() == 0)
        let (fingerprint, _) = try await runToEnd(["openssl", "x509", "-in", root, "-noout", "-fingerprint", "-sha256"])
        let expected = fingerprint.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "?"
        let trust = try HammockProcess(["trust"], environment: ["HAMMOCK_CA_DIR": folder])
        #expect(await trust.firstLine { $0.hasPrefix("The local") } == "The local certificate authority: \(root)")
        #expect(await trust.firstLine { $0.hasPrefix("SHA-256") } == "SHA-256 fingerprint: \(expected)")
        #expect(
            await trust.firstLine { $0.contains("iOS Simulator:") }?.hasSuffix(
                "xcrun simctl keychain booted add-root-cert '\(root)'") == true)
        #expect(await trust.exitStatus() == 0)
    }

    @Test("--cert and --key serve a team's own certificate; a missing half, or a key that is not the certificate's, exits 2")
    func ownCertificate() async throws {
        let folder = TemporaryFiles.directory("own")
        // The team's own certificate: made here with OpenSSL, a tool no one here wrote.
        let (_, made) = try await runToEnd([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "key.pem",
            "-out", folder + "cert.pem",
        ])
        #expect(made == 0)
        let (process, url) = try await Self.serve(
            ["--cert", folder + "cert.pem", "--key", folder + "key.pem"], folder: folder + "ca")
        let (body, status) = try await runToEnd(["curl", "-s", "--cacert", folder + "cert.pem", url + "/people/1"])
        #expect(status == 0 && body.contains("Amy Lee"))
        process.interrupt()
        _ = await process.exitStatus()
        // --no-http2: curl asks for h2 and gets HTTP/1.1.
        let (http1, http1URL) = try await Self.serve(
            ["--cert", folder + "cert.pem", "--key", folder + "key.pem", "--no-http2"], folder: folder + "ca")
        #expect(await http1.firstLine { $0.hasPrefix("https: HTTP/1.1, the certificate in") } != nil)
        let (agreed, _) = try await runToEnd([
            "curl", "-s", "--http2", "--cacert", folder + "cert.pem", "-o", "/dev/null", "-w", "%{http_version}",
            http1URL + "/people/1",
        ])
        #expect(agreed == "1.1")
        http1.interrupt()
        _ = await http1.exitStatus()
        // Nothing was made in the authority's folder: the team brought its own.
        #expect(!FileManager.default.fileExists(atPath: folder + "ca"))
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(
            to: URL(fileURLWithPath: folder + "bad.pem"))
        for (arguments, message) in [
            (["--cert", folder + "cert.pem"], "--cert and --key go together"),
            (["--cert", folder + "cert.pem", "--key", folder + "bad.pem"], "private key"),
            (["--https-name", "x.test"], "--https-name"),
            (["--https", "--cert", folder + "cert.pem", "--key", folder + "key.pem"], "give one of them"),
            (["--no-http2"], "--no-http2 is about HTTPS"),
        ] {
            let refused = try HammockProcess(
                ["serve", "Examples/people.json", "--store", "memory", "--port", "0"] + arguments,
                environment: ["HAMMOCK_CA_DIR": folder + "ca"])
            #expect(await refused.exitStatus() == 2, "\(arguments)")
            #expect(refused.errorOutput.withLock { $0 }.contains(message), "\(arguments)")
        }
    }
}
