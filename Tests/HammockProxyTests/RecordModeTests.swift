import Foundation
import HTTPTypes
import HammockJSON
import HammockProxy
import HammockServer
import HammockServerTesting
import HammockTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Record modes for tests, as snapshot testing has them: never (the recording answers), missing (what it
/// lacks is recorded from the backend), all (recorded anew); never on CI unless HAMMOCK_RECORD says so.
@Suite("Recorded backends for tests", .timeLimit(.minutes(2)))
struct RecordModeTests {
    /// No HAMMOCK_RECORD, no CI: the mode asked for is the mode in force.
    static let quiet: [String: String] = [:]

    @Test("HAMMOCK_RECORD wins, a CI machine never records unless it says so, and a wrong value is an error")
    func modes() throws {
        #expect(try RecordedBackend.Mode.effective(.missing, environment: [:]) == .missing)
        #expect(try RecordedBackend.Mode.effective(.missing, environment: ["CI": "true"]) == .never)
        #expect(try RecordedBackend.Mode.effective(.all, environment: ["CI": "1"]) == .never)
        #expect(try RecordedBackend.Mode.effective(.missing, environment: ["CI": "false"]) == .missing)
        #expect(try RecordedBackend.Mode.effective(.never, environment: ["HAMMOCK_RECORD": "all", "CI": "1"]) == .all)
        #expect(try RecordedBackend.Mode.effective(.all, environment: ["HAMMOCK_RECORD": "Never"]) == .never)
        #expect(throws: RecordedBackend.Failure.self) {
            try RecordedBackend.Mode.effective(.never, environment: ["HAMMOCK_RECORD": "sometimes"])
        }
    }

    @Test("Without a recording, never is an error that says how to record; recording needs the backend's URL")
    func refusals() async throws {
        let file = TemporaryFiles.path("absent", extension: "json")
        let never = await #expect(throws: RecordedBackend.Failure.self) {
            try await RecordedBackend(file: file, upstream: nil, mode: .never, environment: Self.quiet)
        }
        #expect(never?.description.contains("HAMMOCK_RECORD=missing") == true)
        await #expect(throws: RecordedBackend.Failure.self) {
            try await RecordedBackend(file: file, upstream: nil, mode: .missing, environment: Self.quiet)
        }
        // On CI, a test that asks to record still answers only from the recording: here, none.
        await #expect(throws: RecordedBackend.Failure.self) {
            try await RecordedBackend(
                file: file, upstream: URL(string: "http://127.0.0.1:9"), mode: .missing, environment: ["CI": "true"])
        }
    }

    /// An answer's status and body, read to the end (an exchange is recorded when its answer ends).
    static func send(_ backend: RecordedBackend, _ target: String) async throws -> (Int, JSON?) {
        let response = await backend.server.respond(to: MockRequest(.get, target))
        let bytes = try await response.stream?.collect() ?? response.body
        return (Int(response.status.code), try? JSON(parsing: bytes))
    }

    @Test("missing records what the file lacks, never answers from it alone, all records anew")
    func cycle() async throws {
        let file = TemporaryFiles.path("recorded", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        var first: [String: JSON?] = [:]
        try await withHTTPBin { upstream in
            let recording = try await RecordedBackend(file: file, upstream: upstream, mode: .missing, environment: Self.quiet)
            for target in ["/get?a=1", "/uuid"] { first[target] = try await Self.send(recording, target).1 }
            #expect(try recording.finish() == 2)

            // never: the recording answers; what it lacks is a 404 naming the way to record it.
            let replay = try await RecordedBackend(file: file, upstream: nil, mode: .never, environment: Self.quiet)
            #expect(try await Self.send(replay, "/get?a=1").1 == first["/get?a=1"])
            #expect(try await Self.send(replay, "/uuid").1 == first["/uuid"])
            let (status, problem) = try await Self.send(replay, "/get?a=2")
            #expect(status == 404)
            #expect(problem?["detail"]?.stringValue?.contains("not in the recording") == true)
            #expect(try replay.finish() == 0)

            // missing again: what the file has is answered from it; only the new request reaches the backend.
            let more = try await RecordedBackend(file: file, upstream: upstream, mode: .missing, environment: Self.quiet)
            #expect(try await Self.send(more, "/uuid").1 == first["/uuid"])
            _ = try await Self.send(more, "/get?a=3")
            #expect(try more.finish() == 1)
            let routes = try ServerConfiguration(contentsOfFile: file).routes
            #expect(routes.count == 3)

            // all: the file holds what this run saw, and nothing older.
            let anew = try await RecordedBackend(file: file, upstream: upstream, mode: .all, environment: Self.quiet)
            let fresh = try await Self.send(anew, "/uuid").1
            #expect(fresh != first["/uuid"])
            #expect(try anew.finish() == 1)
            #expect(try ServerConfiguration(contentsOfFile: file).routes.count == 1)
        }
    }

    @Test(
        "The trait serves a committed recording in never, the CI default, without any backend",
        .mockServer(recording: "Tests/Recordings/httpbin-get.json"))
    func trait() async throws {
        let mock = try #require(TestMock.current)
        let (data, response) = try await mock.session.data(from: mock.url("get?from=hammock"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSON(parsing: [UInt8](data))["args"]?["from"] == "hammock")
        let (_, missing) = try await mock.session.data(from: mock.url("get?from=elsewhere"))
        #expect((missing as? HTTPURLResponse)?.statusCode == 404)
    }
}
