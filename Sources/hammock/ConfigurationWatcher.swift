import Foundation
import HammockOpenAPI
import HammockServer

/// `hammock serve --watch`: reads the configuration file a few times a second and, once a change has
/// settled (two reads alike), puts it in force with `MockServer.reload(_:)`. A file with a mistake is
/// reported (file, key) and the configuration in force stays.
struct ConfigurationWatcher: Sendable {
    /// How often the file is read: configuration files are small, and a read is cheaper than any
    /// file-system notification that works on Linux and macOS alike.
    static let interval = Duration.milliseconds(250)

    let path: String
    let server: MockServer
    /// The command line's flags, applied over each new reading of the file (and whether an OpenAPI
    /// document made it).
    let applyFlags: @Sendable (inout ServerConfiguration, Bool) throws -> Void

    /// Watches until the task is cancelled, from `baseline`: the file as it was when watching was
    /// announced. Read inside the task, it missed a change saved right after "watching" was printed
    /// whenever the task started later than the save (a loaded test run's CLI test waited for ever).
    func run(from baseline: [UInt8]?, clock: some Clock<Duration> = ContinuousClock()) async {
        var inForce = baseline
        var pending: [UInt8]?
        while !Task.isCancelled {
            do {
                try await clock.sleep(for: Self.interval)
            } catch {
                return
            }
            let now = Self.contents(of: path)
            guard now != inForce else {
                pending = nil
                continue
            }
            // Debounced: an editor may write the file in several steps.
            guard now == pending else {
                pending = now
                continue
            }
            pending = nil
            inForce = now
            await reload()
        }
    }

    func reload() async {
        do {
            let loaded = try ConfigurationFile.load(path)
            var configuration = loaded.configuration
            try applyFlags(&configuration, loaded.openAPI != nil)
            let report = try await server.reload(configuration)
            Serve.printLine("reloaded \(path): \(report)")
        } catch let error as ConfigurationError {
            Serve.printError("\(error.description)\nkeeping the configuration in force")
        } catch {
            Serve.printError("\(path): \(error)\nthe reload stopped part way; fix the file to try again")
        }
    }

    /// The file's bytes, or `nil` when it cannot be read: missing, too large, or not a regular file (a
    /// FIFO put in its place once blocked the watcher for good, waiting for a writer).
    static func contents(of path: String) -> [UInt8]? {
        try? FileContents.read(path, limit: maximumSize)
    }

    /// Larger than this, a change is not read: 64 MiB, far past any configuration or API document.
    static let maximumSize = 64 << 20
}
