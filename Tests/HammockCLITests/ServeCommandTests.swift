import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HammockJSON
import Synchronization
import Testing

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

    @Test("The reference's curl session against hammock serve Examples/people.json")
    func referenceSession() async throws {
        let store = NSTemporaryDirectory() + "hammock-cli-\(UUID().uuidString).sqlite"
        let (process, url) = try await serve(["Examples/people.json", "--store", "sqlite:\(store)"])
        let routes = await process.firstLine { $0.contains("/people/:id/cars") }
        #expect(routes?.hasPrefix("GET, POST") == true)

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

    @Test("A restarted hammock serve keeps its SQLite data and loads the data section only once")
    func restartWithData() async throws {
        let directory = NSTemporaryDirectory() + "hammock-cli-\(UUID().uuidString)/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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
        let path = NSTemporaryDirectory() + "hammock-bad-\(UUID().uuidString).json"
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

    @Test("hammock routes prints the route table")
    func routes() async throws {
        let process = try HammockProcess(["routes", "Examples/people.json"])
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        #expect(await process.exitStatus() == 0)
        #expect(lines.first?.hasPrefix("Verbs") == true)
        #expect(lines.contains { $0.hasPrefix("GET, PUT, PATCH, DELETE") && $0.contains("/people/:id ") })
        #expect(lines.contains { $0.contains("/people/:id/cars") && $0.hasSuffix("cars") })
        #expect(lines.count == 6)
    }
}
