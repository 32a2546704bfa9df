public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// httpbin (from PyPI) under gunicorn on 127.0.0.1, a free port, for the duration of one test, or another
/// Python server of the project's (``startScript(_:_:isTLS:)``). `scripts/setup --tests` installs what they need
/// (in the project's .venv).
public final class HTTPBinServer: Sendable {
    let process: ChildProcess
    /// The port it listens on.
    public let port: Int

    /// Whether it serves HTTPS.
    public let isTLS: Bool

    /// `http://127.0.0.1:PORT` (`https` over TLS).
    public var baseURL: URL { URL(string: "\(isTLS ? "https" : "http")://127.0.0.1:\(port)")! }

    private init(process: ChildProcess, port: Int, isTLS: Bool) {
        self.process = process
        self.port = port
        self.isTLS = isTLS
    }

    /// httpbin did not start (not installed, or it failed): what it printed.
    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts httpbin on a free port of 127.0.0.1 and returns once it listens; over TLS (gunicorn's, with
    /// Python's ssl module) when given a certificate file and its key file (PEM).
    public static func start(certificateFile: String? = nil, keyFile: String? = nil) async throws -> HTTPBinServer {
        var tls: [String] = []
        if let certificateFile, let keyFile { tls = ["--certfile", certificateFile, "--keyfile", keyFile] }
        let arguments =
            [
                ProjectPython.executable, "-m", "gunicorn", "-k", "gthread", "--threads", "8", "--no-control-socket",
                "--graceful-timeout", "1", "-b", "127.0.0.1:0",
                // The app imported before the socket listens, and the worker booted before this returns: a
                // connection made in between waited in the backlog while the worker imported Flask, and on a
                // loaded machine a TLS handshake timed out there (the proxy's 502 after 10 s, 1 run in 3 of a
                // parallel run of the proxy's suites).
                "--preload",
            ] + tls + ["httpbin:app"]
        return try await launch(arguments, isTLS: !tls.isEmpty, name: "httpbin", readyWhen: "Booting worker with pid")
    }

    /// Starts one of the project's Python servers in `Tests/Scripts` (the `websockets` library's WebSocket
    /// backend, `websocket_backend.py`) on a free port of 127.0.0.1, and returns once it listens. The script
    /// says where on standard error as gunicorn does (`Listening at: http://127.0.0.1:PORT`); `isTLS` when the
    /// arguments make it serve HTTPS.
    public static func startScript(
        _ script: String, _ arguments: [String] = [], isTLS: Bool = false
    ) async throws
        -> HTTPBinServer
    {
        try await launch(
            [ProjectPython.executable, ProjectPython.packageRoot + "Tests/Scripts/" + script] + arguments, isTLS: isTLS,
            name: script)
    }

    /// Runs `arguments` and returns once standard error has said where it listens and, when given,
    /// `readyWhen` too.
    private static func launch(
        _ arguments: [String], isTLS: Bool, name: String, readyWhen: String? = nil
    ) async throws -> HTTPBinServer {
        let process = try ChildProcess("/usr/bin/env", arguments, errors: .pipe)
        guard let reading = process.errors else { throw StartFailure(description: "httpbin: no pipe") }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int?.self)
        let output = Mutex("")
        // Read on a thread of its own with blocking reads, not with a readabilityHandler: that handler is a
        // dispatch source, and a pipe closed while its cancellation was still on libdispatch's manager
        // thread crashed the test process (SIGSEGV in _dispatch_event_loop_drain) once another test's
        // process reused the descriptor: 4 runs in 14 of the HTTPS suite. The pipe ends when gunicorn and
        // its workers have all exited.
        Thread.detachNewThread {
            while true {
                let chunk = reading.readAvailable()
                if chunk.isEmpty {
                    reading.close()
                    portContinuation.yield(nil)
                    portContinuation.finish()
                    return
                }
                let text = output.withLock { text -> String in
                    text += String(decoding: chunk, as: UTF8.self)
                    return text
                }
                if let range = text.range(of: #"Listening at: https?://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
                    let port = Int(text[range].split(separator: ":").last ?? ""),
                    readyWhen.map({ text[range.upperBound...].contains($0) }) ?? true
                {
                    portContinuation.yield(port)
                }
            }
        }
        for await port in ports {
            guard let port else { break }
            return HTTPBinServer(process: process, port: port, isTLS: isTLS)
        }
        process.send(SIGKILL)
        let ended = await process.termination()
        throw StartFailure(
            description: "\(name) did not start (run scripts/setup --tests; it \(ended)): \(output.withLock { $0 })")
    }

    /// Stops it and its workers, and returns once it has exited.
    public func stop() async {
        // SIGKILL, not SIGTERM: nothing in it is worth saving, and SIGTERM waits for a worker mid-request
        // up to the graceful timeout. Workers first (they would outlive the master a moment).
        if process.isRunning {
            for worker in Self.children(of: process.processIdentifier) { kill(worker, SIGKILL) }
        }
        process.send(SIGKILL)
        _ = await process.termination()
    }
}

extension HTTPBinServer {
    /// The processes whose parent is `parent` (from /proc on Linux; none elsewhere).
    static func children(of parent: Int32) -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == parent ? pid : nil
        }
    }
}

/// Runs `body` with httpbin running (over TLS with a certificate file and its key), and always stops it.
public func withHTTPBin<T>(
    certificateFile: String? = nil, keyFile: String? = nil, _ body: (URL) async throws -> T
) async throws -> T {
    let server = try await HTTPBinServer.start(certificateFile: certificateFile, keyFile: keyFile)
    do {
        let result = try await body(server.baseURL)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
