import Foundation
import HammockJSON
import HammockTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("hammock serve (end to end)", .serialized, .timeLimit(.minutes(2)))
struct ServeCommandTests {
    struct Reply {
        var status: Int
        var location: String?
        var json: JSON?
    }

    func send(_ method: String, _ url: String, json: JSON? = nil) async throws -> Reply {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        if let json {
            request.httpBody = Data(json.serialized())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let session = URLSession(configuration: .ephemeral)
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return Reply(
            status: http.statusCode, location: http.value(forHTTPHeaderField: "Location"),
            json: data.isEmpty ? nil : try JSON(parsing: [UInt8](data)))
    }

    /// Starts `hammock serve` with `arguments` and returns the process and its base URL.
    func serve(_ arguments: [String]) async throws -> (HammockProcess, String) {
        let process = try HammockProcess(["serve"] + arguments + ["--port", "0"])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        let line = try #require(banner, "no banner; stderr: \(process.errorOutput.withLock { $0 })")
        let url = try #require(line.split(separator: " ").last.map(String.init))
        #expect(url.hasPrefix("http://127.0.0.1:"))
        return (process, url)
    }

    @Test("The reference's curl session against hammock serve on the people example's resources")
    func referenceSession() async throws {
        let store = TemporaryFiles.path("cli", extension: "sqlite")
        let (process, url) = try await serve([try HammockProcess.emptyExample("people"), "--store", "sqlite:\(store)"])
        let routes = await process.firstLine { $0.contains("/people/:id/cars") }
        #expect(routes?.hasPrefix("GET, HEAD, POST") == true)

        let empty = try await send("GET", url + "/people")
        #expect(empty.status == 200 && empty.json == [])
        let john = try await send("POST", url + "/people", json: ["name": "john", "numberOfKids": 1])
        #expect(john.status == 201 && john.location == "/people/1")
        #expect(john.json == ["id": 1, "name": "john", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])
        #expect(try await send("GET", url + "/people").json == [john.json ?? nil])
        let jeff = try await send("PUT", url + "/people/1", json: ["name": "jeff"])
        #expect(jeff.status == 200)
        #expect(jeff.json == ["id": 1, "name": "jeff", "numberOfKids": 1, "kilometersWalked": nil, "avatar": nil])
        #expect(try await send("DELETE", url + "/people/1").status == 204)
        #expect(try await send("GET", url + "/people/1").status == 404)

        let logged = await process.firstLine { $0.contains("DELETE /people/1 204") }
        #expect(logged != nil)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("hammock serve Examples/people.json answers the example's sample people and their cars")
    func exampleData() async throws {
        let store = TemporaryFiles.path("cli", extension: "sqlite")
        let (process, url) = try await serve(["Examples/people.json", "--store", "sqlite:\(store)", "--quiet"])
        let people = try await send("GET", url + "/people").json?.arrayValue
        #expect(people?.count == 5)
        #expect(people?.first?["name"] == "Amy Lee")
        #expect(try await send("GET", url + "/people/1/cars").json?.arrayValue?.map { $0["name"] } == ["Beetle", "Model 3"])
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("hammock serve --seed makes the same generated records every time, and the banner gives the seed it used")
    func generatedData() async throws {
        func records(_ arguments: [String]) async throws -> (banner: String?, records: [JSON]) {
            let process = try HammockProcess(["serve", "Examples/generated.json", "--port", "0", "--quiet"] + arguments)
            let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
            let url = try #require(banner?.split(separator: " ").last.map(String.init))
            let generated = await process.firstLine { $0.hasPrefix("generated: ") }
            var all: [JSON] = []
            for resource in ["users", "posts", "comments"] {
                all += try await send("GET", url + "/\(resource)").json?.arrayValue ?? []
            }
            process.interrupt()
            #expect(await process.exitStatus() == 0)
            return (generated, all)
        }
        let first = try await records(["--seed", "4"])
        #expect(first.banner == "generated: users 50, posts 200, comments 600 (--seed 4 makes the same records)")
        #expect(first.records.count == 850)
        #expect(try await records(["--seed", "4"]).records == first.records)
        // Without a seed the banner names the one drawn, which repeats the run.
        let unseeded = try await records([])
        let seed = try #require(unseeded.banner?.split(separator: " ").dropFirst(8).first.map(String.init))
        #expect(unseeded.records != first.records || seed == "4")
        #expect(try await records(["--seed", seed]).records == unseeded.records)

        let bad = try HammockProcess(["serve", "Examples/generated.json", "--seed", "-1"])
        #expect(await bad.exitStatus() != 0)
    }

    @Test("A restarted hammock serve keeps its SQLite data and loads the data section only once")
    func restartWithData() async throws {
        let directory = TemporaryFiles.directory("cli")
        let config = directory + "shop.json"
        try FileManager.default.copyItem(
            atPath: HammockProcess.packageRoot.appendingPathComponent("Examples/shop.json").path, toPath: config)
        let store = "sqlite:\(directory)shop.sqlite"

        let (first, url) = try await serve([config, "--store", store, "--latency", "0"])
        #expect(try await send("GET", url + "/products").json?.arrayValue?.count == 2)
        #expect(try await send("GET", url + "/categories/garden/products").json?[0]?["name"] == "Hammock")
        _ = try await send("POST", url + "/products", json: ["name": "Rope"])
        first.interrupt()
        #expect(await first.exitStatus() == 0)

        let (second, url2) = try await serve([config, "--store", store])
        let products = try await send("GET", url2 + "/products").json?.arrayValue
        #expect(products?.count == 3)  // the data was not loaded a second time
        #expect(try await send("POST", url2 + "/products", json: ["name": "Net"]).json?["id"] == 4)
        second.interrupt()
        #expect(await second.exitStatus() == 0)
    }

    @Test("A bad configuration file exits with status 2 and names the file and key")
    func badConfiguration() async throws {
        let path = TemporaryFiles.path("bad", extension: "json")
        try Data(#"{"resources": [{"name": "people", "fields": {"age": "years"}}]}"#.utf8).write(to: URL(fileURLWithPath: path))
        let process = try HammockProcess(["serve", path, "--store", "memory"])
        #expect(await process.exitStatus() == 2)
        let message = process.errorOutput.withLock { $0 }
        #expect(message.contains("\(path): resources[0].fields.age: unknown type 'years'"), "\(message)")

        let missing = try HammockProcess(["serve", "/nonexistent/hammock.json"])
        #expect(await missing.exitStatus() == 2)
        #expect(missing.errorOutput.withLock { $0 }.contains("/nonexistent/hammock.json: cannot read the file"))

        let badFlag = try HammockProcess(["serve", "Examples/people.json", "--latency", "fast"])
        #expect(await badFlag.exitStatus() == 2)
        #expect(badFlag.errorOutput.withLock { $0 }.contains("--latency"))
    }

    func temporaryConfig(_ text: String) throws -> (directory: String, path: String) {
        let directory = TemporaryFiles.directory("cli")
        let path = directory + "api.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    @Test(
        "Configuration gaps exit 2 naming the file and key, before anything is served",
        arguments: [
            (
                #"{"resources": [{"name": "tags", "fields": {"label": "string"}, "primaryKey": "slug"}]}"#,
                "resources[0].primaryKey: 'slug' is not a declared field"
            ),
            (#"{"resources": [{"name": "tags", "fields": {}}]}"#, "resources[0].fields: empty"),
            (
                #"{"resources": [{"name": "tags", "fields": {"label": "string", "label": "integer"}}]}"#,
                "resources[0].fields.label: declared twice"
            ),
            (#"{"resources": []}"#, "resources: empty"),
            (
                #"{"resources": [{"name": "people", "fields": {"a": "string"}}, {"name": "People", "fields": {"b": "string"}}]}"#,
                "differs from the resource 'people' only in case"
            ),
        ])
    func configurationGaps(text: String, message: String) async throws {
        let (directory, path) = try temporaryConfig(text)
        let process = try HammockProcess(["serve", path, "--port", "0"])
        #expect(await process.exitStatus() == 2)
        let errors = process.errorOutput.withLock { $0 }
        #expect(errors.contains("\(path): ") && errors.contains(message), "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: directory + "api.sqlite"))  // nothing left behind
    }

    @Test("Start-up failures read as sentences: a missing file, a taken port, a bad port, a store in use")
    func startupFailures() async throws {
        let missing = try HammockProcess(["serve", "/nonexistent/hammock.json"])
        #expect(await missing.exitStatus() == 2)
        let missingText = missing.errorOutput.withLock { $0 }
        #expect(
            missingText.contains("/nonexistent/hammock.json: cannot read the file: No such file or directory"), "\(missingText)")
        #expect(!missingText.contains("NSError") && !missingText.contains("Domain="))

        let badPort = try HammockProcess(["serve", "Examples/people.json", "--port", "-1"])
        #expect(await badPort.exitStatus() == 2)
        #expect(badPort.errorOutput.withLock { $0 }.contains("--port: -1 is not a port"))

        let (directory, path) = try temporaryConfig(#"{"resources": [{"name": "notes", "fields": {"text": "string"}}]}"#)
        let (first, url) = try await serve([path])
        let port = try #require(url.split(separator: ":").last.map(String.init))
        #expect(FileManager.default.fileExists(atPath: directory + "api.sqlite"))

        // The same store file: refused while the first server lives.
        let sameStore = try HammockProcess(["serve", path, "--port", "0"])
        #expect(await sameStore.exitStatus() == 1)
        #expect(sameStore.errorOutput.withLock { $0 }.contains("api.sqlite is in use by another running server"))

        // A taken port, with a fresh store: the message names the address, and the new file is removed.
        let other = try temporaryConfig(#"{"resources": [{"name": "notes", "fields": {"text": "string"}}]}"#)
        let taken = try HammockProcess(["serve", other.path, "--port", port])
        #expect(await taken.exitStatus() == 1)
        let takenText = taken.errorOutput.withLock { $0 }
        #expect(takenText.contains("cannot listen on 127.0.0.1:\(port): Address already in use"), "\(takenText)")
        #expect(!takenText.contains(")"))
        #expect(!FileManager.default.fileExists(atPath: other.directory + "api.sqlite"))

        first.interrupt()
        #expect(await first.exitStatus() == 0)
    }

    @Test("Binding beyond loopback warns; an IPv6 address is printed in brackets")
    func binding() async throws {
        let process = try HammockProcess([
            "serve", "Examples/people.json", "--store", "memory", "--host", "0.0.0.0", "--port", "0",
        ])
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        #expect(banner?.contains("http://0.0.0.0:") == true)
        #expect(await eventually { process.errorOutput.withLock { $0.contains("warning: listening on 0.0.0.0") } })
        process.interrupt()
        #expect(await process.exitStatus() == 0)

        let ipv6 = try HammockProcess(["serve", "Examples/people.json", "--store", "memory", "--host", "::1", "--port", "0"])
        let line = await ipv6.firstLine { $0.hasPrefix("Hammock is serving") }
        if let line {
            #expect(line.contains("http://[::1]:"), "\(line)")
            #expect(!ipv6.errorOutput.withLock { $0.contains("warning") })
            ipv6.interrupt()
            #expect(await ipv6.exitStatus() == 0)
        } else {
            // No IPv6 loopback on this machine: the failure must still be a sentence.
            #expect(ipv6.errorOutput.withLock { $0.contains("cannot listen on [::1]:0") })
        }
    }

    @Test("Out of descriptors, connections beyond the limit are closed rather than left hanging, and serving resumes")
    func descriptorExhaustion() async throws {
        let process = try HammockProcess(
            ["serve", "Examples/people.json", "--store", "memory", "--port", "0"], shellPrefix: "ulimit -n 64")
        let banner = await process.firstLine { $0.hasPrefix("Hammock is serving") }
        let url = try #require(banner?.split(separator: " ").last.map(String.init))
        let port = try #require(url.split(separator: ":").last.flatMap { Int($0) })
        var held: [RawSocket] = []
        for _ in 0..<100 { held.append(try RawSocket(port: port)) }
        let closedByServer = await RawSocket.closedWithoutAnswer(held)
        #expect(closedByServer > 0 && closedByServer < held.count)  // the process held what it could
        held.removeAll()
        var served = false
        for _ in 0..<50 where !served {
            served = (try? await send("GET", url + "/people").status) == 200
            if !served { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(served)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("hammock serve answers the file's routes of its own, under --base-path, and refuses a bad base path")
    func customRoutesUnderBasePath() async throws {
        let (directory, path) = try temporaryConfig(
            #"""
            {"resources": [{"name": "people", "fields": {"name": "string"}}],
             "routes": [{"method": "POST", "path": "/login", "body": {"token": "t-{{request.body.username}}"}}]}
            """#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, url) = try await serve([path, "--store", "memory", "--base-path", "/api/v2/"])
        let login = await process.firstLine { $0.contains("/api/v2/login") }
        #expect(login?.hasPrefix("POST") == true)
        #expect(try await send("POST", url + "/api/v2/login", json: ["username": "ada"]).json == ["token": "t-ada"])
        let created = try await send("POST", url + "/api/v2/people", json: ["name": "ada"])
        #expect(created.status == 201 && created.location == "/api/v2/people/1")
        #expect(try await send("GET", url + "/people").status == 404)
        process.interrupt()
        #expect(await process.exitStatus() == 0)

        let bad = try HammockProcess(["serve", path, "--store", "memory", "--base-path", "api v2"])
        #expect(await bad.exitStatus() == 2)
        #expect(bad.errorOutput.withLock { $0 }.contains("--base-path"))
    }

    @Test("A file of routes alone serves; the admin API takes --admin-token or HAMMOCK_ADMIN_TOKEN and journals requests")
    func routesOnlyWithAdmin() async throws {
        let (directory, path) = try temporaryConfig(
            #"{"routes": [{"method": "GET", "path": "/health", "body": {"ok": true}}]}"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, url) = try await serve([path, "--store", "memory", "--admin-token", "t0k", "--journal-size", "2"])
        let admin = await process.firstLine { $0.hasPrefix("admin: ") }
        #expect(admin?.hasSuffix("/__hammock (requests, reset, snapshots, latency, routes)") == true)
        #expect(try await send("GET", url + "/health").json == ["ok": true])
        for _ in 0..<3 { _ = try await send("GET", url + "/nothing") }
        #expect(try await send("GET", url + "/__hammock/requests").status == 401)
        var request = URLRequest(url: try #require(URL(string: url + "/__hammock/requests")))
        request.setValue("Bearer t0k", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession(configuration: .ephemeral).data(for: request)
        let entries = try JSON(parsing: [UInt8](data)).arrayValue ?? []
        #expect(entries.map { $0["request"]?["path"] } == ["/nothing", "/nothing"])  // --journal-size 2
        process.interrupt()
        #expect(await process.exitStatus() == 0)

        let fromEnvironment = try HammockProcess(
            ["serve", path, "--store", "memory", "--port", "0", "--host", "0.0.0.0"], shellPrefix: "export HAMMOCK_ADMIN_TOKEN=e")
        #expect(await fromEnvironment.firstLine { $0.hasPrefix("Hammock is serving") } != nil)
        #expect(await eventually { fromEnvironment.errorOutput.withLock { $0.contains("warning: listening on 0.0.0.0") } })
        // With a token, no warning about an open admin API.
        #expect(!fromEnvironment.errorOutput.withLock { $0.contains("admin API") })
        fromEnvironment.interrupt()
        #expect(await fromEnvironment.exitStatus() == 0)

        let open = try HammockProcess(["serve", path, "--store", "memory", "--port", "0", "--host", "0.0.0.0"])
        #expect(await eventually { open.errorOutput.withLock { $0.contains("the admin API at /__hammock is open") } })
        open.interrupt()
        #expect(await open.exitStatus() == 0)

        for (flags, message) in [
            (["--admin-path", "no"], "--admin-path: expected a path"), (["--journal-size", "-1"], "--journal-size: expected 0"),
            (["--base-path", "/__hammock"], "basePath: lies under /__hammock"),
        ] {
            let bad = try HammockProcess(["serve", path, "--store", "memory", "--port", "0"] + flags)
            #expect(await bad.exitStatus() == 2, "\(flags)")
            #expect(bad.errorOutput.withLock { $0 }.contains(message), "\(flags)")
        }
    }

    @Test("hammock init writes a starter that serves related resources, a route and data; it never overwrites")
    func initStarter() async throws {
        let directory = TemporaryFiles.directory("init")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "starter.json"
        let first = try HammockProcess(["init", path])
        var lines: [String] = []
        for await line in first.lines { lines.append(line) }
        #expect(await first.exitStatus() == 0)
        #expect(lines.contains("serve it with:  hammock serve \(path)"))
        let again = try HammockProcess(["init", path])
        #expect(await again.exitStatus() == 1)
        #expect(again.errorOutput.withLock { $0 }.contains("exists"))
        let (process, url) = try await serve([path, "--store", "memory"])
        #expect(try await send("GET", url + "/authors/1/posts").json?.arrayValue?.count == 1)
        #expect(
            try await send("POST", url + "/login", json: ["username": "ada", "password": "secret"]).json == ["token": "t-ada"])
        #expect(try await send("POST", url + "/login", json: ["password": "no"]).status == 401)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
        let forced = try HammockProcess(["init", path, "--force"])
        #expect(await forced.exitStatus() == 0)
    }

    @Test("hammock serve --watch puts a changed file in force, keeps data, and keeps the old one when the new has a mistake")
    func watch() async throws {
        let (directory, path) = try temporaryConfig(
            #"{"resources": [{"name": "people", "fields": {"name": "string"}}], "data": {"people": [{"name": "ada"}]}}"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (process, url) = try await serve([path, "--store", "memory", "--watch"])
        #expect(await process.firstLine { $0.hasPrefix("watching ") } != nil)
        _ = try await send("POST", url + "/people", json: ["name": "bob"])
        let changed =
            #"{"resources": [{"name": "people", "fields": {"name": "string"}}, {"name": "shops", "fields": {"title": "string"}}],"#
            + #" "routes": [{"method": "GET", "path": "/ping", "body": {"pong": true}}]}"#
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
        let reloaded = await process.firstLine { $0.hasPrefix("reloaded ") }
        #expect(reloaded?.contains("added shops") == true, "\(reloaded ?? "no line")")
        #expect(try await send("GET", url + "/shops").json == [])
        #expect(try await send("GET", url + "/ping").json == ["pong": true])
        #expect(try await send("GET", url + "/people").json?.arrayValue?.count == 2)  // the data stayed
        try Data(#"{"resources": [{"name": "people", "fields": {"name": "strin"}}]}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(await eventually { process.errorOutput.withLock { $0.contains("keeping the configuration in force") } })
        #expect(process.errorOutput.withLock { $0.contains("resources[0].fields.name: unknown type 'strin'") })
        #expect(try await send("GET", url + "/shops").status == 200)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
    }

    @Test("A store scheme this program does not link exits 2 naming the ones it does, without the password")
    func unknownScheme() async throws {
        let (_, path) = try temporaryConfig(#"{"resources": [{"name": "notes", "fields": {"text": "string"}}]}"#)
        let process = try HammockProcess(["serve", path, "--port", "0", "--store", "redis://ada:s3cret@localhost/app"])
        #expect(await process.exitStatus() == 2)
        let text = process.errorOutput.withLock { $0 }
        #expect(
            text.contains("store: no store opens 'redis:' here; this program knows memory:, postgres:, postgresql:, sqlite:"),
            "\(text)")
        #expect(!text.contains("s3cret"))
    }

    @Test("A store written when a field had another type is refused: exit 2 naming resource, field and both types")
    func schemaChanged() async throws {
        let (directory, path) = try temporaryConfig(#"{"resources": [{"name": "people", "fields": {"name": "string"}}]}"#)
        let (first, url) = try await serve([path])
        #expect(try await send("POST", url + "/people", json: ["name": "Amy"]).status == 201)
        first.interrupt()
        #expect(await first.exitStatus() == 0)
        try Data(#"{"resources": [{"name": "people", "fields": {"name": "integer"}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let changed = try HammockProcess(["serve", path, "--port", "0"])
        #expect(await changed.exitStatus() == 2)
        let text = changed.errorOutput.withLock { $0 }
        #expect(text.contains("people.name is integer now, but the store holds people written when it was string"), "\(text)")
        #expect(FileManager.default.fileExists(atPath: directory + "api.sqlite"))  // the data is kept
    }

    @Test("hammock serve --fault injects failures, listed in the banner; a bad one exits 2 naming it")
    func faults() async throws {
        let (process, url) = try await serve([
            try HammockProcess.emptyExample("people"), "--store", "memory", "--fault", "GET /people/:id 503 retry-after=1",
            "--fault", "* delay=0",
        ])
        #expect(await process.firstLine { $0 == "fault: GET /people/:id 503 retry-after=1 (named fault-1)" } != nil)
        #expect(try await send("POST", url + "/people", json: ["name": "ada"]).status == 201)
        #expect(try await send("GET", url + "/people/1").status == 503)
        #expect(try await send("GET", url + "/people").status == 200)
        process.interrupt()
        #expect(await process.exitStatus() == 0)
        let bad = try HammockProcess([
            "serve", "Examples/people.json", "--store", "memory", "--port", "0", "--fault", "GET /x 503 2000%",
        ])
        #expect(await bad.exitStatus() == 2)
        #expect(bad.errorOutput.withLock { $0 }.contains("--fault: GET /x 503 2000%: the rate 20.0 is not between 0 and 1"))
    }

    @Test("hammock serve --help lists the admin and journal flags")
    func help() async throws {
        let process = try HammockProcess(["serve", "--help"])
        var text = ""
        for await line in process.lines { text += line + "\n" }
        #expect(await process.exitStatus() == 0)
        for flag in ["--admin-path", "--admin-token", "--journal-size", "--strict", "--watch", "--fault"] {
            #expect(text.contains(flag), "\(flag)")
        }
    }

    @Test("hammock routes prints the route table")
    func routes() async throws {
        let process = try HammockProcess(["routes", "Examples/people.json"])
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        #expect(await process.exitStatus() == 0)
        #expect(lines.first?.hasPrefix("Verbs") == true)
        #expect(lines.contains { $0.hasPrefix("GET, HEAD, PUT, PATCH, DELETE") && $0.contains("/people/:id ") })
        #expect(lines.contains { $0.contains("/people/:id/cars") && $0.hasSuffix("cars") })
        #expect(lines.count == 6)
    }

    @Test("A server whose starting process ends without stopping it stops by itself, saying why")
    func stopsWithItsParent() async throws {
        let folder = TemporaryFiles.directory("orphan")
        let log = folder + "serve.log"
        // A shell starts the server in the background, naming itself in HAMMOCK_PARENT_PID (as
        // ChildProcess names a test process), waits for the banner, prints the server's pid and ends
        // without stopping it: what a test run that crashes does to the servers it started.
        let script = """
            HAMMOCK_PARENT_PID=$$ "$0" serve "$1" --port 0 > "$2" 2>&1 &
            server=$!
            for i in $(seq 1 300); do grep -q '^Hammock is serving' "$2" && break; sleep 0.1; done
            echo "$server"
            """
        let shell = try ChildProcess(
            "/bin/sh", ["-c", script, HammockProcess.executable().path, try HammockProcess.emptyExample("people"), log],
            output: .pipe)
        #expect(await shell.termination() == .exited(0))
        let printed = String(decoding: shell.output?.readToEnd() ?? [], as: UTF8.self)
        let server = try #require(Int32(printed.trimmingCharacters(in: .whitespacesAndNewlines)), "printed: \(printed)")
        let stopped = await eventually { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("stopping") }
        if !stopped { kill(server, SIGKILL) }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("Hammock is serving"))
        #expect(text.contains("the process that started this server (HAMMOCK_PARENT_PID="))
        #expect(text.contains("stopping"))
    }
}

/// A plain TCP connection that sends nothing, for holding descriptors of the server's.
final class RawSocket: Sendable {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    /// How many of `sockets` the server closed without a byte, looking for a second on a thread of
    /// its own (never the concurrency pool's).
    static func closedWithoutAnswer(_ sockets: [RawSocket]) async -> Int {
        let descriptors = sockets.map(\.descriptor)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var pollers = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                _ = poll(&pollers, nfds_t(pollers.count), 1_000)
                var closed = 0
                for poller in pollers where poller.revents != 0 {
                    var byte: UInt8 = 0
                    if recv(poller.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { closed += 1 }
                }
                continuation.resume(returning: closed)
            }
        }
    }

    deinit { close(descriptor) }
}
