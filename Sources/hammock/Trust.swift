import ArgumentParser
import Foundation
import HammockHTTPServer

/// `hammock trust`: where the local certificate authority of `--https` is, and how to trust it on this
/// machine, in the iOS Simulator, the macOS keychain, Debian's store and curl; `--install` does what it can
/// here.
struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show how to trust the certificate authority behind --https (and make it on first use).",
        discussion: """
            The authority lives in the user's configuration folder ($HAMMOCK_CA_DIR, else \
            $XDG_CONFIG_HOME/hammock, else ~/.config/hammock; ~/Library/Application Support/Hammock on macOS), \
            never in a project. It signs certificates for this machine's development servers only: trust it on \
            machines and simulators you develop on, nowhere else. docs/https.md.
            """
    )

    @Flag(
        help:
            "Also do what can be done from here: add it to the booted iOS Simulator and the login keychain (macOS), or to the system's store (Debian and Ubuntu, as root)."
    )
    var install = false

    func run() async throws {
        let folder = LocalCertificateAuthority.defaultFolder()
        let authority: LocalCertificateAuthority
        do {
            authority = try LocalCertificateAuthority.loadOrCreate(in: folder)
        } catch {
            Serve.printError("hammock trust: \(error)")
            throw ExitCode(1)
        }
        let path = folder + "/" + LocalCertificateAuthority.certificateFile
        print("The local certificate authority: \(path)")
        print("SHA-256 fingerprint: \(authority.fingerprint)")
        print("")
        print("To trust it:")
        print("  curl:             curl --cacert '\(path)' https://127.0.0.1:8443/")
        print("  iOS Simulator:    xcrun simctl keychain booted add-root-cert '\(path)'")
        print("  macOS keychain:   security add-trusted-cert -r trustRoot -k ~/Library/Keychains/login.keychain-db '\(path)'")
        print(
            "  Debian, Ubuntu:   sudo cp '\(path)' /usr/local/share/ca-certificates/hammock-local-ca.crt && sudo update-ca-certificates"
        )
        print("  Node.js:          NODE_EXTRA_CA_CERTS='\(path)'")
        print("  Python requests:  REQUESTS_CA_BUNDLE='\(path)'  (replaces the bundle; point it at a copy with both)")
        guard install else { return }
        print("")
        #if canImport(Darwin)
        Self.run("/usr/bin/xcrun", ["simctl", "keychain", "booted", "add-root-cert", path], what: "the booted iOS Simulator")
        Self.run(
            "/usr/bin/security",
            ["add-trusted-cert", "-r", "trustRoot", "-k", NSHomeDirectory() + "/Library/Keychains/login.keychain-db", path],
            what: "the login keychain")
        #else
        let store = "/usr/local/share/ca-certificates"
        guard FileManager.default.isWritableFile(atPath: store),
            FileManager.default.fileExists(atPath: "/usr/sbin/update-ca-certificates")
        else {
            print("not installed: \(store) is not writable here (run the Debian line above with sudo)")
            throw ExitCode(1)
        }
        do {
            let target = store + "/hammock-local-ca.crt"
            try? FileManager.default.removeItem(atPath: target)
            try authority.certificatePEM.write(toFile: target, atomically: false, encoding: .utf8)
        } catch {
            print("not installed: \(error.localizedDescription)")
            throw ExitCode(1)
        }
        Self.run("/usr/sbin/update-ca-certificates", [], what: "the system's store")
        #endif
    }

    static func run(_ executable: String, _ arguments: [String], what: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        do {
            try process.run()
            process.waitUntilExit()
            print(
                process.terminationStatus == 0
                    ? "added to \(what)" : "not added to \(what) (\(executable) exited \(process.terminationStatus))")
        } catch {
            print("not added to \(what): \(error.localizedDescription)")
        }
    }
}
