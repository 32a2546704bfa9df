import Foundation
import HammockServer
import HammockTesting
import Testing

@Suite("hammock doctor and --version", .timeLimit(.minutes(1)))
struct DoctorCommandTests {
    static func output(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, [String]) {
        let process = try HammockProcess(arguments, environment: environment)
        var lines: [String] = []
        for await line in process.lines { lines.append(line) }
        return (await process.exitStatus(), lines)
    }

    @Test("hammock --version prints the library's version, and the serve banner names it")
    func version() async throws {
        let (status, lines) = try await Self.output(["--version"])
        #expect(status == 0 && lines == [MockServer.version])

        let server = try await DocumentedServer.start(["Examples/people.json"])
        #expect(await server.waitForLine("version: \(MockServer.version)"))
        await server.stop()
    }

    @Test("hammock doctor names each missing tool with how to get it, and still exits 0")
    func missingTools() async throws {
        let empty = TemporaryFiles.directory("doctor")
        let (status, lines) = try await Self.output(
            ["doctor", "--project", empty, "--port", "0"], environment: ["PATH": empty + "nothing-here"])
        #expect(status == 0)
        #expect(lines.first == "hammock \(MockServer.version)")
        for tool in ["chromium", "chromedriver", "curl"] {
            #expect(lines.contains { $0.hasPrefix("missing \(tool): ") && $0.hasSuffix("scripts/setup --tests installs it") })
        }
        #expect(lines.contains { $0.hasPrefix("missing swift: ") && $0.contains("install Swift 6") })
        #expect(lines.contains { $0.hasPrefix("missing .venv: ") })
        #expect(lines.contains { $0.hasPrefix("ok      sqlite store") })
        #expect(lines.contains { $0.hasPrefix("missing port 0: not a TCP port") })
    }

    @Test("hammock doctor finds the tools scripts/setup --tests installed")
    func foundTools() async throws {
        let (status, lines) = try await Self.output(["doctor"])
        #expect(status == 0)
        for tool in ["curl", "swift", ".venv", "initdb"] {
            #expect(lines.contains { $0.hasPrefix("ok      \(tool): ") }, "\(lines)")
        }
    }

    @Test("hammock doctor says a port is in use while a server holds it")
    func portInUse() async throws {
        let server = try await DocumentedServer.start(["Examples/people.json"])
        let port = try #require(server.authority.split(separator: ":").last.map(String.init))
        let (status, lines) = try await Self.output(["doctor", "--port", port])
        await server.stop()
        #expect(status == 0)
        #expect(lines.contains { $0.hasPrefix("missing port \(port): in use on 127.0.0.1") }, "\(lines)")
    }
}
