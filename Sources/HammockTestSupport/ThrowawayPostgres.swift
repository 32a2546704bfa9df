import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL server of a test process's own: a cluster made with `initdb` in a temporary directory,
/// listening on a free port of 127.0.0.1 with a password, started on first use and stopped (its files
/// removed) when the test process ends, however it ends.
///
/// ```swift
/// let postgres = try await ThrowawayPostgres.shared()
/// let url = postgres.url(database: "postgres")   // postgres://hammock@127.0.0.1:PORT/postgres
/// ```
///
/// It needs PostgreSQL's server programs (Debian's `postgresql` package; `scripts/setup --tests` installs it).
/// As root, the server runs as the `postgres` user, since PostgreSQL refuses to run as root.
public final class ThrowawayPostgres: Sendable {
    /// Why the cluster could not start.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let username = "hammock"
    /// A password made for this cluster (sign-in is `scram-sha-256`, so a store must send it).
    public let password: String
    /// The cluster's directory (data, socket, log).
    public let directory: String
    /// The folder of PostgreSQL's programs (`postgres`, `psql`, …), ending in `/`.
    public let binaries: String
    let runAs: String?
    private let server = Mutex<ChildProcess?>(nil)

    private static let instance = Mutex<Task<ThrowawayPostgres, any Error>?>(nil)

    /// The process's cluster, started on first call.
    public static func shared() async throws -> ThrowawayPostgres {
        let task = instance.withLock { instance in
            if let instance { return instance }
            let task = Task { try await ThrowawayPostgres.make() }
            instance = task
            return task
        }
        return try await task.value
    }

    /// `postgres://USER@127.0.0.1:PORT/DATABASE` (the password is not in it: pass ``password`` or set `PGPASSWORD`).
    public func url(database: String = "postgres") -> String { "postgres://\(username)@127.0.0.1:\(port)/\(database)" }

    private init(port: Int, password: String, directory: String, binaries: String, runAs: String?) {
        self.port = port
        self.password = password
        self.directory = directory
        self.binaries = binaries
        self.runAs = runAs
    }

    /// A cluster of its own, apart from the shared one: for a test that stops and starts its server.
    /// Call ``remove()`` when done (the process's end removes it too).
    public static func make() async throws -> ThrowawayPostgres {
        guard let binaries = findBinaries() else {
            throw Unavailable(description: "PostgreSQL's server programs are not installed (run scripts/setup --tests)")
        }
        let runAs: String? = geteuid() == 0 ? "postgres" : nil
        // Not under the test run's directory: as root, the server's user must be able to enter this one.
        let directory = "/tmp/hammock-postgres-\(getpid())-\(UUID().uuidString.prefix(8))/"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let password = UUID().uuidString
        try Data(password.utf8).write(to: URL(fileURLWithPath: directory + "password"))
        if let runAs {
            guard await run(as: nil, ["/bin/chown", "-R", runAs, directory], log: nil) == 0 else {
                throw Unavailable(description: "cannot give \(directory) to the user \(runAs)")
            }
        }
        let initdb = [
            binaries + "initdb", "-D", directory + "data", "-U", "hammock", "--auth=scram-sha-256",
            "--pwfile=" + directory + "password", "-E", "UTF8", "--locale=C", "--no-sync",
        ]
        guard await run(as: runAs, initdb, log: directory + "initdb.log") == 0 else {
            throw Unavailable(description: "initdb failed; see \(directory)initdb.log")
        }
        let port = try freePort()
        let cluster = ThrowawayPostgres(
            port: port, password: password, directory: directory, binaries: binaries, runAs: runAs)
        try await cluster.start()
        return cluster
    }

    /// Starts the server (again, after ``stop()``) and waits until it accepts connections.
    ///
    /// The server runs under a small shell that watches this process: when the test process is gone
    /// (finished, crashed or killed), it stops the server and removes the directory within a second.
    public func start() async throws {
        // Why 1,000 connections: every store a test opens has a pool of up to 16, and the suite's parallel
        // tests held 158 at once on a warm run (counted from `ps` every 0.5 s). With 200, a slower (cold,
        // first) run went past it: the server refused sign-ins ("too many clients already"), pools could
        // not grow, and 37 calls waited out the 10 s limit. At 110 the same suite fails at once; at 40 the
        // stores cannot open.
        let options =
            "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c max_connections=1000"
        let script = """
            \(binaries)postgres -D \(directory)data \(options) >>\(directory)server.log 2>&1 &
            server=$!
            while [ -d /proc/\(getpid()) ] && kill -0 $server 2>/dev/null; do sleep 1; done
            kill -INT $server 2>/dev/null; wait $server
            [ -d /proc/\(getpid()) ] || rm -rf \(directory)
            """
        let process = try ChildProcess(
            runAs == nil ? "/bin/sh" : "/usr/sbin/runuser",
            (runAs.map { ["-u", $0, "--", "/bin/sh"] } ?? []) + ["-c", script])
        server.withLock { $0 = process }
        for _ in 0..<300 {
            // Accepting TCP is not yet accepting sign-ins while the server starts or recovers: the
            // server writes "ready" as the last line of postmaster.pid when it is (read, not a process
            // started every 100 ms, which holds copies of this process's files while it starts).
            if isAccepting(), isReady() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Unavailable(description: "PostgreSQL did not start within 30 s; see \(directory)server.log")
    }

    /// Stops the server at once (as a crash or an unplugged database would look to a client), and waits
    /// until its port is closed. ``start()`` brings it back with its data.
    public func stop() async throws {
        let pidFile = directory + "data/postmaster.pid"
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = Int32(line)
        {
            kill(pid, SIGINT)
        }
        let process = server.withLock { process in
            defer { process = nil }
            return process
        }
        for _ in 0..<300 {
            if process?.isRunning != true && !isAccepting() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Unavailable(description: "PostgreSQL did not stop within 30 s")
    }

    /// Freezes the server (`SIGSTOP` to the postmaster and each of its processes): connections stay
    /// open and nothing answers, as a paused VM or a network black hole looks to a client. ``resume()``
    /// thaws it.
    public func pause() { signalServer(SIGSTOP) }

    /// Thaws a server ``pause()`` froze.
    public func resume() { signalServer(SIGCONT) }

    /// Sends `signal` to the postmaster and every process whose parent it is (its backends, its workers).
    private func signalServer(_ signal: Int32) {
        guard let text = try? String(contentsOfFile: directory + "data/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = Int32(line)
        else { return }
        var pids = [postmaster]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // `pid (name) state ppid …`: the parent is the second field after the name.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        // Children first when stopping (none can then be forked meanwhile), the postmaster first when thawing.
        for pid in signal == SIGSTOP ? pids.reversed() : pids { kill(pid, signal) }
    }

    /// Stops the server and removes its files.
    public func remove() async throws {
        try await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func isReady() -> Bool {
        guard let text = try? String(contentsOfFile: directory + "data/postmaster.pid", encoding: .utf8) else { return false }
        return text.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) == "ready"
    }

    private func isAccepting() -> Bool {
        let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard handle >= 0 else { return false }
        defer { close(handle) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A port of 127.0.0.1 that was free a moment ago.
    private static func freePort() throws -> Int {
        let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard handle >= 0 else { throw Unavailable(description: "no socket") }
        defer { close(handle) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(handle, address, length) == 0 && getsockname(handle, address, &length) == 0
            }
        }
        guard bound else { throw Unavailable(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The newest `…/postgresql/VERSION/bin/` folder, or the folder of an `initdb` on the `PATH`.
    static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql/"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            let folder = root + "\(version)/bin/"
            if FileManager.default.isExecutableFile(atPath: folder + "postgres") { return folder }
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = String(folder) + "/"
            if FileManager.default.isExecutableFile(atPath: path + "postgres") { return path }
        }
        return nil
    }

    /// Runs a command (as `user`, through `runuser`), waits, and returns its exit status (-1 when it could
    /// not start).
    static func run(as user: String?, _ command: [String], log: String?) async -> Int32 {
        guard let program = command.first else { return -1 }
        let (executable, arguments) =
            user.map { ("/usr/sbin/runuser", ["-u", $0, "--"] + command) } ?? (program, Array(command.dropFirst()))
        guard
            let child = try? ChildProcess(
                executable, arguments, output: log.map { .file($0) } ?? .nullDevice,
                errors: log == nil ? .nullDevice : .sameAsOutput)
        else { return -1 }
        return await child.termination().status
    }
}
