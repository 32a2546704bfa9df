import FuzzSupport
import HammockJSON
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
                    _ = try await MockServer(configuration: configuration, store: MemoryStore(), tokenSigner: NoSigner())
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

/// A signer for configurations with a login, that signs nothing: what is fuzzed is the reading of the
/// `auth` section and the server's start with it, not cryptography (built with AddressSanitizer, it would
/// double this target's build).
struct NoSigner: AccessTokenSigner, AccessTokenKeyring {
    let algorithm = AuthSettings.SigningAlgorithm.es256
    let keyIDs = ["none"]
    let jwks: JSON = ["keys": []]
    func keyring(for algorithm: AuthSettings.SigningAlgorithm) async throws -> any AccessTokenKeyring { self }
    func sign(_ claims: JSONObject) async throws -> String { "none.none.none" }
    func verify(_ token: String, keyID: String) async throws -> JSONObject { throw CancellationError() }
    func rotate(keepingPrevious: Bool) async throws {}
}
