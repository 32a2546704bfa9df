import Foundation
import HammockJSON
import HammockTesting
import Testing

/// `hammock serve` with WebSocket routes from its configuration file, met by the `websockets` library
/// (PyPI; Tests/Scripts/websocket_client.py) over ws:// and wss://: a client no one here wrote.
@Suite("WebSocket routes against Python's websockets", .timeLimit(.minutes(2)))
struct WebSocketCommandTests {
    static func configuration() throws -> String {
        let text = """
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "routes": [
               {"path": "/ws/echo", "websocket": {"echo": true}},
               {"path": "/ws/faulty", "websocket": {"echo": true}},
               {"path": "/ws/greet", "websocket": {"messages": [{"text": "hello {{query.name}}"},
                  {"json": {"n": 2}, "delay": 10}, {"close": 4001, "reason": "script over"}]}},
               {"path": "/ws/people", "websocket": {"feed": "people", "protocols": ["hammock.v1"]}}
             ],
             "faults": [{"route": "GET /ws/faulty", "webSocket": {"close": 1011, "afterMessages": 2}}]}
            """
        let path = TemporaryFiles.directory("websockets") + "sockets.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs the client against `hammock serve` with `arguments`; its reports by check.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], caFile: String? = nil
    ) async throws
        -> [String: JSON]
    {
        try await HammockProcess.pythonReports(
            serving: [try configuration(), "--port", "0"] + arguments, environment: environment, script: "websocket_client.py",
            scriptArguments: caFile.map { [$0] } ?? [])
    }

    static func check(_ reports: [String: JSON]) {
        #expect(reports["echo"]?["text"] == "hello")
        #expect(reports["echo"]?["bytes"] == [0, 1, 255])
        #expect(reports["echo"]?["close"] == 4000)
        #expect(reports["script"]?["messages"] == ["hello Ada", #"{"n":2}"#])
        #expect(reports["script"]?["close"] == 4001)
        #expect(reports["script"]?["reason"] == "script over")
        #expect(reports["feed"]?["subprotocol"] == "hammock.v1")
        #expect(reports["feed"]?["status"] == 201)
        #expect(reports["feed"]?["change"]?["type"] == "created")
        #expect(reports["feed"]?["change"]?["record"]?["name"] == "Grace")
        #expect(reports["fault"]?["echoed"] == ["a", "b"])
        #expect(reports["fault"]?["close"] == 1011)
    }

    @Test("Over ws://, echo, a script, a live feed and a fault behave as configured for the websockets library")
    func plain() async throws {
        let reports = try await Self.run([])
        #expect(reports.count == 4, "\(reports)")
        Self.check(reports)
    }

    @Test("Over wss:// with --https (TLS, HTTP/1.1 chosen by ALPN), the same checks pass with the local authority trusted")
    func overTLS() async throws {
        let folder = TemporaryFiles.directory("ca") + "hammock"
        let reports = try await Self.run(["--https"], environment: ["HAMMOCK_CA_DIR": folder], caFile: folder + "/hammock-ca.pem")
        #expect(reports.count == 4, "\(reports)")
        Self.check(reports)
    }
}
