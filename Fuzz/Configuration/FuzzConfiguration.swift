import FuzzSupport
import HammockServer

/// The configuration reader: never a crash, and a file it accepts describes resources a server can
/// be built from.
@main
struct FuzzTarget {
    static func main() {
        Fuzzer.run { data, count in
            guard let configuration = try? ServerConfiguration(parsing: Fuzzer.bytes(data, count), file: "fuzz.json") else {
                return 0
            }
            let built = Fuzzer.wait { () async -> String? in
                do {
                    _ = try await MockServer(configuration: configuration, store: MemoryStore())
                    return nil
                } catch {
                    return String(describing: error)
                }
            }
            Fuzzer.check(built == nil, "an accepted configuration cannot start a server: \(built ?? "")")
            return 0
        }
    }
}
