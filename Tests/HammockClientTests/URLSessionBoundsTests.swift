import Foundation
import HTTPTypes
import HammockTestSupport
import Synchronization
import Testing

@testable import HammockClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLSessionTransport` is bounded like `AsyncHTTPClientTransport`: 16 MiB and 60 s by default, the
/// size counted as the body arrives.
@Suite("URLSession transport: bounded by default", .timeLimit(.minutes(1)))
struct URLSessionBoundsTests {
    @Test("The defaults match AsyncHTTPClientTransport's: 16 MiB and 60 seconds; extremes are clamped")
    func defaults() {
        let transport = URLSessionTransport()
        #expect(transport.maximumResponseSize == 16 << 20)
        #expect(transport.timeout == .seconds(60))
        #expect(URLSessionTransport(timeout: .seconds(Int64.max)).timeout == .seconds(366 * 86_400))
        #expect(URLSessionTransport(timeout: .seconds(-1)).timeout == .milliseconds(1))
        #expect(URLSessionTransport(maximumResponseSize: Int.min).maximumResponseSize == 0)
    }

    @Test(
        "A body past the limit fails with a transport error, on the transport's session and on one the app passes",
        arguments: [false, true])
    func tooLarge(customSession: Bool) async throws {
        let server = try RecordingHTTPServer { _ in RecordingHTTPServer.Reply(body: Array(repeating: 7, count: 64 << 10)) }
        defer { server.stop() }
        let transport = URLSessionTransport(
            session: customSession ? URLSession(configuration: .ephemeral) : nil, maximumResponseSize: 1_000)
        let client = RestClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, transport: transport)
        let error = try await #require(throws: RestError.self) { try await client.send(RequestBuilder(.get, "/big")) }
        guard case .transport(let cause) = error.reason else {
            Issue.record("expected a transport failure, got \(error.reason)")
            return
        }
        #expect((cause as? URLError)?.code == .dataLengthExceedsMaximum)
        // Within the limit, the same body arrives whole.
        let roomy = RestClient(
            baseURL: URL(string: "http://127.0.0.1:\(server.port)")!,
            transport: URLSessionTransport(maximumResponseSize: 64 << 10))
        #expect(try await roomy.send(RequestBuilder(.get, "/big")).body.count == 64 << 10)
    }

    @Test("A body without a declared length is stopped at the byte that passes the limit, not once it is whole")
    func countedAsItArrives() async throws {
        let transfer = DataTransfer(limit: 10, reporter: nil)
        let outcome = Mutex<Result<Int, any Error>?>(nil)
        let done = AsyncStream<Void>.makeStream()
        Task {
            do {
                let (data, _) = try await withCheckedThrowingContinuation { transfer.start($0) }
                outcome.withLock { $0 = .success(data.count) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.continuation.finish()
        }
        let head = URLResponse(url: URL(string: "http://x/")!, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
        #expect(transfer.received(head))
        #expect(transfer.received(Data(repeating: 1, count: 6)))
        #expect(!transfer.received(Data(repeating: 1, count: 6)), "the 12th byte passes the limit: cancel now")
        for await _ in done.stream {}
        let result = try #require(outcome.withLock { $0 })
        #expect(throws: URLError.self) { try result.get() }
        // What arrives after the failure is dropped, and the task's end changes nothing.
        #expect(transfer.received(Data(repeating: 1, count: 1)))
        transfer.completed(error: nil, response: head)
    }

    @Test("The timeout covers the whole call: a body that trickles in past it fails; a generous one lets it through")
    func timeoutCoversBody() async throws {
        let server = try RecordingHTTPServer { _ in
            // 4 s of body against a 300 ms timeout: a margin that a loaded machine (the suite runs races
            // with every core busy alongside) cannot eat.
            RecordingHTTPServer.Reply(body: Array("abcd".utf8), trickle: .seconds(1))
        }
        defer { server.stop() }
        let base = URL(string: "http://127.0.0.1:\(server.port)")!
        let hasty = RestClient(baseURL: base, transport: URLSessionTransport(timeout: .milliseconds(300)))
        let error = try await #require(throws: RestError.self) { try await hasty.send(RequestBuilder(.get, "/slow")) }
        guard case .timedOut = error.reason else {
            Issue.record("expected a timeout, got \(error.reason)")
            return
        }
        let patient = RestClient(baseURL: base, transport: URLSessionTransport(timeout: .seconds(30)))
        #expect(try await patient.send(RequestBuilder(.get, "/slow")).body == Array("abcd".utf8))
    }

    @Test("Progress reports reach a listening task: the head with its length, then growing totals")
    func progress() async throws {
        let server = try RecordingHTTPServer { _ in RecordingHTTPServer.Reply(body: Array(repeating: 1, count: 200_000)) }
        defer { server.stop() }
        let events = Mutex<[TransferEvent]>([])
        let transport = URLSessionTransport()
        let head = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/file")
        let (_, body) = try await TransferProgress.$reporter.withValue(
            TransferReporter { event in events.withLock { $0.append(event) } }
        ) {
            try await transport.send(head, body: nil)
        }
        let seen = events.withLock { $0 }
        #expect(seen.first == .responseHeadReceived(expectedBytes: 200_000))
        #expect(seen.last == .responseBytesReceived(total: body.count))
        #expect(body.count == 200_000)
    }
}
