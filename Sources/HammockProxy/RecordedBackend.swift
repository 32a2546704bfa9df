public import Foundation
import HTTPTypes
import HammockJSON
public import HammockServer

/// A mock that answers from a recording file and, as its mode allows, forwards what the file lacks to the
/// real backend and adds it to the file: the record modes iOS developers know from snapshot testing.
///
/// ```swift
/// let backend = try await RecordedBackend(
///     file: "Tests/Recordings/login.json", upstream: URL(string: "https://api.example.test")!, mode: .missing)
/// // … the test runs against backend.server …
/// let recorded = try backend.finish()   // new exchanges written into the file
/// ```
/// The mode in force is ``Mode/effective(_:environment:)``'s: `HAMMOCK_RECORD` (`never`, `missing`, `all`)
/// when set, else `never` on a CI machine (`CI` set), else the mode asked for; so a test retried on CI
/// cannot record and pass. A recording holds stubs only (``ProxyRecording``'s redaction applies), and a
/// request it lacks in `never` is a 404 saying so.
public final class RecordedBackend: Sendable {
    /// When the backend is asked.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Never: the recording answers, and a request it lacks is a 404 saying how to record it.
        case never
        /// For what the recording lacks: the rest is forwarded to the backend, and added to the file.
        case missing
        /// For everything: the file is recorded anew.
        case all

        /// The environment variable that overrides the mode a test asks for.
        public static let variable = "HAMMOCK_RECORD"

        /// The mode in force: `HAMMOCK_RECORD` when set, else `never` when `CI` is set (a CI machine:
        /// a retried test must not record and pass), else `requested`.
        /// - Throws: ``RecordedBackend/Failure`` when `HAMMOCK_RECORD` holds something else.
        public static func effective(
            _ requested: Mode, environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(Failure) -> Mode {
            if let text = environment[variable], !text.isEmpty {
                guard let mode = Mode(rawValue: text.lowercased()) else {
                    throw Failure(
                        description: "\(variable)=\(text.prefix(40)) is not a record mode; use never, missing or all")
                }
                return mode
            }
            if let ci = environment["CI"], !ci.isEmpty, ci.lowercased() != "false" { return .never }
            return requested
        }
    }

    /// Why a recorded backend cannot start or write.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, and what to do.
        public var description: String
    }

    /// The recording's file.
    public let file: String
    /// The mode in force.
    public let mode: Mode
    /// The server to send requests to (start it on loopback, or reach it in process).
    public let server: MockServer
    let recording: ProxyRecording?
    /// The file's configuration when the backend started (`nil` when recorded anew).
    let existing: JSON?

    /// Starts a mock from `file` in the effective mode for `mode` (see ``Mode/effective(_:environment:)``).
    /// - Parameter upstream: The real backend; needed unless the mode in force is `never`.
    /// - Throws: ``Failure`` when there is no recording to answer from in `never`, no upstream to record
    ///   from otherwise, or the file is not a configuration.
    public init(
        file: String, upstream: URL?, mode: Mode = .never, redaction: RecordingRedaction = RecordingRedaction(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws {
        let mode = try Mode.effective(mode, environment: environment)
        self.file = file
        self.mode = mode
        let exists = FileManager.default.fileExists(atPath: file)
        var existing: JSON?
        if exists, mode != .all {
            do {
                existing = try JSON(parsing: try FileContents.read(file))
            } catch let error as FileContents.ReadError {
                throw Failure(description: "cannot read the recording \(file): \(error.reason)")
            } catch {
                throw Failure(description: "cannot read the recording \(file): \(error)")
            }
        }
        if mode == .never, existing == nil {
            throw Failure(
                description:
                    "no recording at \(file): run the test once with \(Mode.variable)=missing and the backend reachable")
        }
        let server: MockServer
        if let existing {
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration(root: existing, file: file)
            } catch {
                throw Failure(description: "the recording \(error)")
            }
            server = try await MockServer.inMemory(configuration)
        } else {
            server = try await MockServer(resources: [])
        }
        if mode == .never {
            recording = nil
            server.addRoutes(NotRecordedRoutes(file: file), first: false)
        } else {
            guard let upstream else {
                throw Failure(description: "recording into \(file) (\(mode.rawValue)) needs the backend's URL")
            }
            let recording = ProxyRecording(redaction: redaction)
            self.recording = recording
            do {
                server.addRoutes(try ProxyRoutes(upstream: upstream, recording: recording), first: false)
            } catch {
                throw Failure(description: error.description)
            }
        }
        self.existing = existing
        self.server = server
    }

    /// How many exchanges were recorded since the start.
    public var recorded: Int { recording?.exchanges.count ?? 0 }

    /// Writes the exchanges recorded since the start into the file (after the stubs it had, in `missing`;
    /// alone, in `all`) and returns how many; in `never`, or when nothing was recorded, writes nothing.
    /// - Throws: ``Failure`` when the file cannot be written.
    @discardableResult
    public func finish() throws(Failure) -> Int {
        guard let recording, !recording.exchanges.isEmpty else { return 0 }
        var (configuration, summary) = recording.configuration(inferringResources: false)
        if case .object(var root)? = existing, case .array(let added)? = configuration["routes"] {
            let kept = root["routes"]?.arrayValue ?? []
            root["routes"] = .array(kept + added)
            configuration = .object(root)
        }
        // Every exchange left out (a body over the limit): the file, if any, stays as it was.
        guard configuration["resources"] != nil || configuration["routes"] != nil else { return 0 }
        do {
            try ProxyRecording.writePrivately(configuration, toFile: file)
        } catch {
            throw Failure(description: error.description)
        }
        return summary.exchanges
    }
}

/// Asked last in `never`: what the recording lacks is a 404 that says how to record it.
struct NotRecordedRoutes: MockRoutes {
    let file: String

    func endpoint(for request: MockRequest) throws -> MockEndpoint? {
        let file = self.file
        return MockEndpoint(methods: ProxyRoutes.methods, route: MatchedRoute(kind: .custom, pattern: "/**")) { request in
            throw HTTPProblem(
                .notFound,
                detail:
                    "\(request.method.rawValue) \(request.path.prefix(200)) is not in the recording \(file); run the test with \(RecordedBackend.Mode.variable)=missing to record it"
            )
        }
    }

    var routeTable: [RouteTableEntry] { [] }
}
