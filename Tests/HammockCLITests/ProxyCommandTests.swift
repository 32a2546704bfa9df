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
            #expect(echoed.json?["headers"]?["Via"]?.stringValue?.wholeMatch(of: /1\.1 hammock-[0-9a-f]{8}/) != nil)
            process.interrupt()
            _ = await process.exitStatus()
        }
    }

    @Test(
        "WebSockets pass through to a backend, over ws:// and wss://, for the websockets library at both ends",
        arguments: [false, true])
    func webSockets(overTLS: Bool) async throws {
        let backend = try await HTTPBinServer.startScript("websocket_backend.py")
        let folder = TemporaryFiles.directory("ca") + "hammock"
        let record = TemporaryFiles.path("ws-recorded", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: record) }
        let reports: [String: JSON]
        do {
            reports = try await HammockProcess.pythonReports(
                serving: ["--port", "0", "--proxy", backend.baseURL.absoluteString, "--record", record]
                    + (overTLS ? ["--https"] : []),
                environment: overTLS ? ["HAMMOCK_CA_DIR": folder] : [:], script: "websocket_proxy_client.py",
                scriptArguments: overTLS ? [folder + "/hammock-ca.pem"] : [])
            await backend.stop()
        } catch {
            await backend.stop()
            throw error
        }
        #expect(reports.count == 6, "\(reports)")
        #expect(reports["echo"]?["text"] == "hello" && reports["echo"]?["bytes"] == [0, 1, 255])
        #expect(
            reports["echo"]?["backend"]?["code"] == 4000 && reports["echo"]?["backend"]?["reason"] == "done",
            "\(reports["echo"] ?? nil)")
        #expect(reports["vanish"]?["backend"]?["code"] == 1001, "\(reports["vanish"] ?? nil)")
        #expect(reports["vanish"]?["backend"]?["reason"] == "the client went away")
        #expect(reports["hello"]?["subprotocol"] == "chat.v2" && reports["hello"]?["target"] == "/hello?room=7")
        #expect(reports["hello"]?["fields"]?["Authorization"] == "Bearer t-1")
        #expect(reports["hello"]?["fields"]?["Via"]?.stringValue?.wholeMatch(of: /1\.1 hammock-[0-9a-f]{8}/) != nil)
        #expect(reports["hello"]?["fields"]?["Host"] == .string("127.0.0.1:\(backend.port)"))
        #expect(reports["close"]?["close"] == 4001 && reports["close"]?["reason"] == "bye from backend")
        #expect(reports["long"]?["length"] == 300_000)
        #expect(reports["refuse"]?["status"] == 403 && reports["refuse"]?["reason"] == "refused by the backend")
        #expect(reports["refuse"]?["body"] == "no socket for you\n")

        // What passed was recorded when the server stopped: each socket as a route that plays it back.
        let written = try String(contentsOfFile: record, encoding: .utf8)
        let routes = try JSON(parsing: Array(written.utf8))["routes"]?.arrayValue ?? []
        let echo = try #require(routes.first { $0["path"] == "/echo" && $0["websocket"] != nil }, "\(written)")
        // Each reply after the client's message, its delay (however long the backend took) aside.
        let steps = (echo["websocket"]?["messages"]?.arrayValue ?? []).map { step -> JSON in
            guard case .object(var object) = step else { return step }
            object["delay"] = nil
            return .object(object)
        }
        let expected: [JSON] = [["receive": true], ["text": "hello"], ["receive": true], ["base64": "AAH/"]]
        #expect(steps == expected, "\(echo)")
        let close = try #require(routes.first { $0["path"] == "/close" }, "\(written)")
        #expect(close["websocket"]?["messages"]?.arrayValue?.last?["close"] == 4001)
        #expect(routes.contains { $0["path"] == "/refuse" && $0["status"] == 403 })
        #expect(!written.contains("Bearer t-1"))
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

    @Test("hammock record that saw no traffic leaves an earlier recording in place, and says so")
    func recordNothing() async throws {
        let file = TemporaryFiles.path("kept", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let earlier = #"{"routes": [{"method": "GET", "path": "/ping", "status": 200, "text": "pong"}]}"#
        try Data(earlier.utf8).write(to: URL(fileURLWithPath: file))
        // No request is made, so the backend is never reached.
        let process = try HammockProcess(["record", "http://127.0.0.1:9", file, "--port", "0"])
        #expect(await process.firstLine { $0.hasPrefix("Hammock is serving") } != nil)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
        let summary = await process.firstLine { $0.hasPrefix("recorded ") }
        #expect(summary == "recorded 0 exchanges: nothing to serve, the file was left as it was (\(file))")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == earlier)
    }

    @Test("hammock record writes what passed when stopped, owner-only, secrets redacted; hammock serve then answers it alone")
    func record() async throws {
        let file = TemporaryFiles.path("recorded", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withHTTPBin { upstream in
            let process = try HammockProcess(["record", upstream.absoluteString, file, "--port", "0", "--redact-member", "pin"])
            let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
            let url = try #require(banner?.split(separator: " ").last.map(String.init))
            #expect(await process.firstLine { $0.hasPrefix("record: ") } != nil)
            let echoed = try await serving.send("POST", url + "/anything/pay", json: ["pin": "4711-9911", "amount": 12])
            #expect(echoed.json?["json"]?["pin"] == "4711-9911")
            process.interrupt()
            #expect(await process.exitStatus() == 0)
            let summary = await process.firstLine { $0.hasPrefix("recorded ") }
            #expect(summary == "recorded 1 exchange, 1 stub into \(file)")
        }
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!written.contains("4711-9911") && written.contains("\"amount\": 12"))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        // The backend is gone; the recording answers.
        let (replay, url) = try await serving.serve([file])
        let again = try await serving.send("POST", url + "/anything/pay", json: ["pin": "0000", "amount": 12])
        #expect(again.status == 200 && again.json?["json"]?["pin"] == "REDACTED")
        replay.interrupt()
        _ = await replay.exitStatus()
    }

    @Test("--record without --proxy, and serve with neither a file nor --proxy, exit 2 saying what is missing")
    func recordRefused() async throws {
        let cases: [([String], String)] = [
            (["serve", "Examples/people.json", "--port", "0", "--record", "x.json"], "--proxy"),
            (["serve", "--port", "0"], "give a configuration file"),
            (["serve", "Examples/people.json", "--port", "0", "--record-stubs"], "--record"),
            (["record", "http://127.0.0.1:9", "/no/such/folder/x.json", "--port", "0"], "cannot write into"),
        ]
        for (arguments, message) in cases {
            let process = try HammockProcess(arguments)
            #expect(await process.exitStatus() == 2, "\(arguments)")
            #expect(process.errorOutput.withLock { $0 }.contains(message), "\(arguments)")
        }
    }

    @Test(
        "hammock serve FILE.har answers a HAR mitmproxy wrote: the banner says what it holds, a repeated request answers in order"
    )
    func archive() async throws {
        let file = "Tests/HAR/mitmproxy-httpbin.har"
        let (process, url) = try await serving.serve([file])
        let line = await process.firstLine { $0.hasPrefix("har: ") }
        #expect(line?.hasPrefix("har: 10 entries of http://127.0.0.1:") == true)
        #expect(line?.hasSuffix(" as 9 stubs") == true)
        let har = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        let uuids = (har["log"]?["entries"]?.arrayValue ?? []).filter {
            $0["request"]?["url"]?.stringValue?.hasSuffix("/uuid") == true
        }
        .compactMap { $0["response"]?["content"]?["text"]?.stringValue }.compactMap { try? JSON(parsing: $0) }
        #expect(uuids.count == 2)
        #expect(try await serving.send("GET", url + "/uuid").json == uuids.first)
        #expect(try await serving.send("GET", url + "/uuid").json == uuids.last)
        #expect(try await serving.send("GET", url + "/status/404").status == 404)
        process.interrupt()
        _ = await process.exitStatus()
    }

    @Test("hammock serve FILE.har serves a HAR of sockets alone (a browser's filtered to WS), and says what it holds")
    func socketsOnlyArchive() async throws {
        let har =
            #"{"log": {"version": "1.2", "entries": [{"startedDateTime": "2026-12-01T10:00:01.000Z", "_resourceType": "websocket", "#
            + #""request": {"method": "GET", "url": "wss://api.example.test/socket?room=1", "headers": []}, "#
            + #""response": {"status": 101, "headers": [{"name": "Upgrade", "value": "websocket"}], "content": {"size": 0}}, "#
            + #""_webSocketMessages": [{"type": "receive", "time": 1796119201.05, "opcode": 1, "data": "hello"}]}]}}"#
        let file = TemporaryFiles.path("sockets", extension: "har")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(har.utf8).write(to: URL(fileURLWithPath: file))
        let (process, url) = try await serving.serve([file])
        let line = await process.firstLine { $0.hasPrefix("har: ") }
        #expect(line == "har: 1 entry of https://api.example.test as 0 stubs and 1 WebSocket session")
        // The socket's route is there: a plain GET is told to upgrade.
        #expect(try await serving.send("GET", url + "/socket?room=1").status == 426)
        process.interrupt()
        _ = await process.exitStatus()
    }

    @Test("A file's proxy rules forward on this machine; another host needs --allow-upstream, or serve exits 2")
    func fileRules() async throws {
        try await withHTTPBin { upstream in
            let file = TemporaryFiles.path("proxied", extension: "json")
            defer { try? FileManager.default.removeItem(atPath: file) }
            let local =
                #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "proxy": [{"path": "/anything/**", "to": "\#(upstream.absoluteString)"}]}"#
            try Data(local.utf8).write(to: URL(fileURLWithPath: file))
            let (process, url) = try await serving.serve([file, "--store", "memory"])
            #expect(await process.firstLine { $0.hasPrefix("proxy: /anything/** goes to") } != nil)
            #expect(
                try await serving.send("GET", url + "/anything/x").json?["url"]?.stringValue?.hasSuffix("/anything/x") == true)
            #expect(try await serving.send("GET", url + "/people").status == 200)
            process.interrupt()
            _ = await process.exitStatus()
        }
        let file = TemporaryFiles.path("remote", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(#"{"proxy": [{"to": "http://upstream.test:9/api"}]}"#.utf8).write(to: URL(fileURLWithPath: file))
        let refused = try HammockProcess(["serve", file, "--port", "0"])
        #expect(await refused.exitStatus() == 2)
        #expect(refused.errorOutput.withLock { $0 }.contains("--allow-upstream upstream.test"))
        // Allowed, it starts; the host does not exist, so its requests are 502s naming it.
        let (allowed, url) = try await serving.serve([file, "--allow-upstream", "upstream.test"])
        #expect(try await serving.send("GET", url + "/x").status == 502)
        allowed.interrupt()
        _ = await allowed.exitStatus()
    }

    @Test("A file's webhooks are sent by hammock serve to another mock on this machine, and listed in its journal")
    func webhooks() async throws {
        let receiverFile = TemporaryFiles.path("receiver", extension: "json")
        try Data(#"{"routes": [{"method": "POST", "path": "/hooks/:id", "status": 202}]}"#.utf8).write(
            to: URL(fileURLWithPath: receiverFile))
        let (receiver, receiverURL) = try await serving.serve([receiverFile])
        let senderFile = TemporaryFiles.path("sender", extension: "json")
        let sender =
            #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "webhooks": [{"name": "created", "on": "POST /people", "url": "\#(receiverURL)/hooks/{{response.body.id}}", "body": {"name": "{{request.body.name}}"}}]}"#
        try Data(sender.utf8).write(to: URL(fileURLWithPath: senderFile))
        let process: HammockProcess
        let url: String
        do {
            (process, url) = try await serving.serve([senderFile, "--store", "memory"])
        } catch {
            receiver.interrupt()
            _ = await receiver.exitStatus()
            throw error
        }
        // Both processes are stopped whatever the checks find.
        func stopBoth() async {
            process.interrupt()
            _ = await process.exitStatus()
            receiver.interrupt()
            _ = await receiver.exitStatus()
        }
        do {
            try await checkWebhook(url: url, receiverURL: receiverURL)
        } catch {
            await stopBoth()
            throw error
        }
        await stopBoth()
    }

    func checkWebhook(url: String, receiverURL: String) async throws {
        #expect(try await serving.send("POST", url + "/people", json: ["name": "Ada"]).status == 201)
        var received: JSON?
        for _ in 0..<200 {
            let listing = try await serving.send("GET", receiverURL + "/__hammock/requests")
            received = listing.json?.arrayValue?.first { $0["request"]?["path"] == "/hooks/1" }
            if received != nil { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(received?["request"]?["body"] == ["name": "Ada"])
        let attempts = try await serving.send("GET", url + "/__hammock/requests").json?.arrayValue ?? []
        #expect(attempts.contains { $0["webhook"]?["name"] == "created" && $0["response"]?["status"] == 202 })
    }
}
