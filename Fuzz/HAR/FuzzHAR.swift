import FuzzSupport
import HammockJSON
import HammockProxy
import HammockServer

/// HAR files from a third party (a browser's developer tools, another tool, a colleague), read as
/// `hammock serve recording.har` reads them: never a crash, and a file the reader accepts becomes a
/// configuration that the configuration reader accepts and a server starts from. (A recording whose
/// WebSocket route asked for `Upgrade` with a pattern the reader refuses broke the second half.)
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            let bytes = Fuzzer.bytes(data, count)
            for inferring in [false, true] {
                guard let read = try? HTTPArchive.read(bytes, file: "fuzz.har", inferringResources: inferring) else {
                    return 0
                }
                // Nothing to serve: `hammock serve` refuses such a file itself, saying so.
                let summary = read.summary
                guard summary.stubs + summary.webSockets + summary.resources.count > 0 else { return 0 }
                let configuration: ServerConfiguration
                do {
                    configuration = try ServerConfiguration(root: read.configuration, file: "fuzz.har")
                } catch {
                    Fuzzer.check(
                        false, "an accepted HAR (inferring: \(inferring)) made a configuration the reader refuses: \(error)")
                    return 0
                }
                let started = Fuzzer.wait { () async -> String? in
                    do {
                        _ = try await MockServer.inMemory(configuration)
                        return nil
                    } catch {
                        return String(describing: error)
                    }
                }
                Fuzzer.check(started == nil, "an accepted HAR (inferring: \(inferring)) cannot start a server: \(started ?? "")")
            }
            return 0
        }
    }
}
