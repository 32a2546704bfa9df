public import Foundation
public import HammockProxy
public import Testing

/// Gives each test a mock that answers from a recording file and, as the record mode allows, records what
/// the file lacks from the real backend: snapshot testing's record modes, for a backend.
///
/// ```swift
/// @Test(.mockServer(recording: "Tests/Recordings/profile.json", upstream: URL(string: "https://api.example.test")!, mode: .missing))
/// func showsTheProfile() async throws {
///     let mock = try #require(TestMock.current)
///     …
/// }
/// ```
/// The mode in force is `HAMMOCK_RECORD` when set, `never` on CI (`CI` set), else the one given
/// (``RecordedBackend/Mode/effective(_:environment:)``). A run that records anything fails with an issue
/// saying what it wrote, as a snapshot test does: the next run checks against it. In `never` a request
/// the recording lacks is a 404 saying how to record it.
public struct RecordedServerTrait: TestTrait, TestScoping {
    /// How the test reaches the server.
    public let reach: TestMock.Reach
    /// The recording's file (relative to the working directory: the package's root under `swift test`).
    public let file: String
    /// The real backend, needed to record.
    public let upstream: URL?
    /// The mode asked for.
    public let mode: RecordedBackend.Mode

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let backend = try await RecordedBackend(file: file, upstream: upstream, mode: mode)
        let mock = try await TestMock.start(reach) { backend.server }
        do {
            try await TestMock.$current.withValue(mock) { try await function() }
        } catch {
            await mock.stop()
            // The test's own error is the one to see; a recording that could not be written is an issue beside it.
            do {
                try Self.finish(backend)
            } catch let failure {
                Issue.record(failure)
            }
            throw error
        }
        await mock.stop()
        try Self.finish(backend)
    }

    /// Writes what was recorded, and fails the test when that was anything.
    static func finish(_ backend: RecordedBackend) throws {
        let count = try backend.finish()
        guard count > 0 else { return }
        Issue.record(
            Comment(
                rawValue:
                    "recorded \(count) exchange\(count == 1 ? "" : "s") into \(backend.file) (\(RecordedBackend.Mode.variable)=\(backend.mode.rawValue)); run the test again to check against the recording"
            ))
    }
}

extension Trait where Self == RecordedServerTrait {
    /// A mock answering from the recording `file`, recording what it lacks from `upstream` as `mode`
    /// allows (`never` by default, and always on CI unless `HAMMOCK_RECORD` says otherwise).
    public static func mockServer(
        _ reach: TestMock.Reach = .inProcess, recording file: String, upstream: URL? = nil,
        mode: RecordedBackend.Mode = .never
    ) -> Self {
        RecordedServerTrait(reach: reach, file: file, upstream: upstream, mode: mode)
    }
}

extension TestMock {
    /// Starts a mock answering from the recording `file` (see ``RecordedServerTrait``), for XCTest:
    ///
    /// ```swift
    /// override func setUp() async throws {
    ///     (mock, recorder) = try await TestMock.start(recording: "Tests/Recordings/profile.json", upstream: api, mode: .missing)
    /// }
    /// override func tearDown() async throws {
    ///     await mock.stop()
    ///     XCTAssertEqual(try recorder.finish(), 0, "recorded new exchanges; run again")
    /// }
    /// ```
    public static func start(
        _ reach: Reach = .inProcess, recording file: String, upstream: URL? = nil, mode: RecordedBackend.Mode = .never
    ) async throws -> (mock: TestMock, recorder: RecordedBackend) {
        let backend = try await RecordedBackend(file: file, upstream: upstream, mode: mode)
        return (try await start(reach) { backend.server }, backend)
    }
}
