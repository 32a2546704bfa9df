import Foundation
import HammockJSON
import HammockTesting
import Testing

/// `hammock serve --proxy`: the mock in front of httpbin (PyPI), a backend no one here wrote.
@Suite("hammock serve --proxy (end to end)", .timeLimit(.minutes(2)))
struct ProxyCommandTests {
    let serving = ServeCommandTests()

    @Test("What the file mocks is the mock's; the rest is httpbin's, and the banner says where it goes")
    func proxied() async throws {
        try await withHTTPBin { upstream in
            let (process, url) = try await serving.serve([
                "Examples/people.json", "--store", "memory", "--proxy", upstream.absoluteString,
            ])
            let line = await process.firstLine { $0.hasPrefix("proxy: ") }
            #expect(line == "proxy: what the mock does not answer goes to \(upstream.absoluteString)")
            #expect(try await serving.send("GET", url + "/people/1").json?["name"] == "Amy Lee")
            let echoed = try await serving.send("GET", url + "/get?from=hammock&show_env=1")
            #expect(echoed.status == 200)
            #expect(echoed.json?["args"]?["from"] == "hammock")
            #expect(echoed.json?["headers"]?["Via"] == "1.1 hammock")
            process.interrupt()
            _ = await process.exitStatus()
        }
    }

    @Test("An upstream that is no http(s) URL with a host exits 2 before anything is served, naming --proxy")
    func refused() async throws {
        for upstream in ["ftp://example.com", "not a url", "http://example.com/api?key=1"] {
            let process = try HammockProcess([
                "serve", "Examples/people.json", "--store", "memory", "--port", "0", "--proxy", upstream,
            ])
            #expect(await process.exitStatus() == 2, "\(upstream)")
            #expect(process.errorOutput.withLock { $0 }.contains("--proxy"), "\(upstream)")
        }
    }
}
