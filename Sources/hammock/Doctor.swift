import ArgumentParser
import Foundation
import HammockServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hammock doctor`: what this machine has for each feature, and what to install for what is missing.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what this machine has for each feature, and how to get what is missing.",
        discussion: """
            Serving needs nothing beyond the binary: the SQLite and PostgreSQL stores are built in (PostgreSQL \
            is reached over the network; no client library is needed). The rest is what the tests and checks \
            of a checkout use, all installed by `scripts/setup --tests`. Exits 0: missing tools are not errors.
            """
    )

    @Option(help: "The checkout whose test tools (.venv) to look at.")
    var project = "."

    @Option(help: "The port to check is free (the examples use 8888).")
    var port = 8888

    struct Finding {
        var found: Bool
        var what: String
        var detail: String
    }

    func run() async throws {
        Serve.printLine("hammock \(MockServer.version)")
        for finding in findings() {
            Serve.printLine("\(finding.found ? "ok     " : "missing") \(finding.what): \(finding.detail)")
        }
    }

    func findings() -> [Finding] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        func program(_ name: String, also: [String] = []) -> String? {
            let candidates = path.split(separator: ":").map { "\($0)/\(name)" } + also
            return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        func tool(
            _ name: String, _ use: String, also: [String] = [], install: String = "scripts/setup --tests installs it"
        ) -> Finding {
            if let found = program(name, also: also) { return Finding(found: true, what: name, detail: "\(found) (\(use))") }
            return Finding(found: false, what: name, detail: "\(use); \(install)")
        }
        var findings = [
            Finding(found: true, what: "sqlite store", detail: "built in (sqlite:PATH, the default for a file)"),
            Finding(found: true, what: "postgres store", detail: "built in (postgres://USER@HOST/DB, no client library needed)"),
            portFinding(),
        ]
        let postgresBinaries =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted()
            .map { "/usr/lib/postgresql/\($0)/bin/initdb" }
        findings.append(tool("initdb", "PostgreSQL's server programs, for the PostgreSQL store's tests", also: postgresBinaries))
        findings.append(tool("chromium", "the console's browser test, scripts/check-console"))
        findings.append(tool("chromedriver", "the console's browser test, scripts/check-console"))
        findings.append(tool("curl", "the documented commands' test"))
        findings.append(tool("swift", "building from source", install: "install Swift 6 (swift.org/install)"))
        let python = URL(fileURLWithPath: project).appendingPathComponent(".venv/bin/python3").path
        let requirements = URL(fileURLWithPath: project).appendingPathComponent(".venv/requirements-tests.txt").path
        if FileManager.default.isExecutableFile(atPath: python) && FileManager.default.fileExists(atPath: requirements) {
            let detail = "\(python) (httpbin, schemathesis, Selenium for the tests)"
            findings.append(Finding(found: true, what: ".venv", detail: detail))
        } else {
            findings.append(
                Finding(
                    found: false, what: ".venv",
                    detail: "the tests' Python tools in \(project)/.venv; scripts/setup --tests makes it"))
        }
        return findings
    }

    /// Whether `port` on 127.0.0.1 is free, by binding it for a moment.
    func portFinding() -> Finding {
        guard (1...65535).contains(port) else {
            return Finding(found: false, what: "port \(port)", detail: "not a TCP port (1 to 65535)")
        }
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return Finding(found: false, what: "port \(port)", detail: "no socket: errno \(errno)") }
        defer { close(descriptor) }
        // As the server binds (SwiftNIO sets SO_REUSEADDR): a port left in TIME_WAIT by the last run is free.
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if bound == 0 {
            return Finding(found: true, what: "port \(port)", detail: "free on 127.0.0.1")
        }
        return Finding(
            found: false, what: "port \(port)",
            detail: "in use on 127.0.0.1 (another hammock?); serve with --port 0 for a free one")
    }
}
