import Foundation
import HammockAsyncHTTPClient
import HammockClient
import HammockHTTPServer
import HammockServer
import HammockTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `hammock-client-bench download [--megabytes N]`: a large body downloaded to disk through each
/// transport, against the same body read whole into memory (the baseline, in the same run): peak growth
/// of resident memory, wall time and CPU time per megabyte.
enum DownloadBenchmark {
    /// The process's resident memory, from `/proc/self/statm` (0 where there is none).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func run(megabytes: Int) async throws {
        let total = megabytes << 20
        let server = try await MockServer()
        let chunk = [UInt8](repeating: 0x7A, count: 64 << 10)
        try server.route(.get, "/big") { _ in
            MockResponse(
                status: .ok, headerFields: [.contentType: "application/octet-stream"],
                stream: StreamingBody(length: total) { writer in
                    for _ in 0..<(total / chunk.count) { try await writer.write(chunk) }
                })
        }
        let port = try await server.start(host: "127.0.0.1", port: 0)
        let loopback = URL(string: "http://127.0.0.1:\(port)")!
        let roads: [(String, RestClient)] = [
            ("AsyncHTTPClient, loopback", RestClient(baseURL: loopback, transport: AsyncHTTPClientTransport())),
            ("URLSession, loopback", RestClient(baseURL: loopback, transport: URLSessionTransport())),
            ("in process", RestClient(baseURL: URL(string: "http://mock")!, transport: MockServerTransport(server: server))),
        ]
        print("| \(megabytes) MB, GET /big | way | peak resident growth | wall | CPU per MB |")
        print("|---|---|---:|---:|---:|")
        for (name, client) in roads {
            var request = RequestBuilder(.get, "/big")
            request.maximumResponseSize = total
            // The download first, so that memory the baseline leaves with the allocator cannot hide its growth.
            let download = try await measure {
                let file = try await client.download(request)
                precondition(file.byteCount == total, "\(file.byteCount) bytes downloaded")
                try? FileManager.default.removeItem(at: file.url)
            }
            // The baseline: the same body read whole (a request size limit lifts the transport's).
            let whole = try await measure {
                let body = try await client.send(request).body
                precondition(body.count == total, "\(body.count) bytes read whole")
            }
            for (way, result) in [("read whole (baseline)", whole), ("download to disk", download)] {
                print(
                    String(
                        format: "| %@ | %@ | %d MB | %.2f s | %.1f ms |", name, way, result.growth >> 20, result.wall,
                        result.cpu / Double(megabytes) * 1000))
            }
        }
        await server.stop()
    }

    /// Runs `work` once, sampling resident memory every 5 ms.
    static func measure(_ work: () async throws -> Void) async throws -> (growth: Int, wall: Double, cpu: Double) {
        let before = residentBytes()
        let peak = Mutex(before)
        let sampler = Task {
            while !Task.isCancelled {
                let now = residentBytes()
                peak.withLock { $0 = max($0, now) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        let start = ContinuousClock.now
        let cpu = ClientBench.cpuSeconds()
        try await work()
        let wall = ContinuousClock.now - start
        let used = ClientBench.cpuSeconds() - cpu
        sampler.cancel()
        _ = await sampler.value
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        return (max(0, peak.withLock { $0 } - before), seconds, used)
    }
}
