import Crypto
public import Foundation
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A certificate authority of this machine's own, for serving the mock over HTTPS: made on first use
/// (a P-256 key and a ten-year root), kept in the user's configuration folder (never the project), and
/// trusted once by the developer (`hammock trust` says how). Each start issues a fresh leaf for the names
/// the mock is reached by.
///
/// ```swift
/// let authority = try LocalCertificateAuthority.loadOrCreate()
/// let identity = try authority.issue(for: ["localhost", "127.0.0.1", "::1"])
/// try await server.start(port: 8443, tls: identity)
/// ```
/// The key file is written readable by its owner only (0600), in a folder only its owner can enter (0700).
public struct LocalCertificateAuthority: Sendable {
    /// Why the authority cannot be read, made or used.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, and where.
        public var description: String

        /// A failure saying `description`.
        public init(description: String) { self.description = description }
    }

    /// The root certificate, PEM: what a client trusts (`curl --cacert`, the Simulator, a keychain).
    public let certificatePEM: String
    /// The certificate.
    let certificate: Certificate
    /// Its key, PEM (PKCS#8).
    let keyPEM: String

    /// The file names in the folder.
    public static let certificateFile = "hammock-ca.pem"
    public static let keyFile = "hammock-ca-key.pem"

    /// Where the authority lives: `$HAMMOCK_CA_DIR`, else `$XDG_CONFIG_HOME/hammock`, else
    /// `~/.config/hammock` (`~/Library/Application Support/Hammock` on macOS).
    public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let folder = environment["HAMMOCK_CA_DIR"], !folder.isEmpty { return folder }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/hammock" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        #if canImport(Darwin)
        return home + "/Library/Application Support/Hammock"
        #else
        return home + "/.config/hammock"
        #endif
    }

    /// A new authority, in memory (a test's, or one about to be saved).
    public static func make(commonName: String = "Hammock local CA", now: Date = Date()) throws(Failure) -> Self {
        let key = P256.Signing.PrivateKey()
        do {
            let name = try DistinguishedName {
                CommonName(commonName)
                OrganizationName("Hammock (development only)")
            }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
                issuerPrivateKey: Certificate.PrivateKey(key))
            return Self(
                certificatePEM: try certificate.serializeAsPEM().pemString, certificate: certificate,
                keyPEM: key.pemRepresentation)
        } catch {
            throw Failure(description: "cannot make a certificate authority: \(error)")
        }
    }

    /// The authority in `folder`, made and saved there first if there is none.
    /// - Throws: ``Failure`` when the folder cannot be made or written, or its files cannot be read as an
    ///   authority (then nothing is replaced: remove them to start over).
    public static func loadOrCreate(in folder: String = defaultFolder(), now: Date = Date()) throws(Failure) -> Self {
        let certificatePath = folder + "/" + certificateFile
        let keyPath = folder + "/" + keyFile
        let manager = FileManager.default
        if manager.fileExists(atPath: certificatePath) || manager.fileExists(atPath: keyPath) {
            do {
                let certificatePEM = try String(contentsOfFile: certificatePath, encoding: .utf8)
                let keyPEM = try String(contentsOfFile: keyPath, encoding: .utf8)
                let certificate = try Certificate(pemEncoded: certificatePEM)
                let key = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
                guard Certificate.PublicKey(key.publicKey) == certificate.publicKey else {
                    throw Failure(description: "the key is not the certificate's")
                }
                return Self(certificatePEM: certificatePEM, certificate: certificate, keyPEM: keyPEM)
            } catch {
                throw Failure(
                    description:
                        "cannot read the certificate authority in \(folder) (\(error)); remove \(certificateFile) and \(keyFile) there to make a new one"
                )
            }
        }
        let authority = try make(now: now)
        do {
            try manager.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Failure(description: "cannot make \(folder): \(error.localizedDescription)")
        }
        // The key first, created 0600 and never through a file placed at its name.
        try write(authority.keyPEM, to: keyPath, mode: 0o600)
        try write(authority.certificatePEM, to: certificatePath, mode: 0o644)
        return authority
    }

    /// Writes a new file (`O_EXCL`: one already there, or a link placed there, is an error, not a target).
    static func write(_ text: String, to path: String, mode: mode_t) throws(Failure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { buffer in systemWrite(descriptor, buffer.baseAddress, buffer.count) }
        guard written == bytes.count else {
            throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The SHA-256 of the root certificate's DER bytes, as `AB:CD:…` (what a keychain shows to compare).
    public var fingerprint: String {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate)) != nil else { return "unknown" }
        return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// A leaf for `names` (host names and IP addresses), signed by this authority, valid from an hour ago
    /// for 30 days: what one run of the server proves itself with. Its key is made here and never saved.
    /// - Throws: ``Failure`` for a name that is neither a host name nor an IP address, or none at all.
    public func issue(for names: [String], now: Date = Date()) throws(Failure) -> TLSIdentity {
        let (chain, key) = try issuePEM(for: names, now: now)
        do {
            return try TLSIdentity(certificateChainPEM: chain, privateKeyPEM: key)
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// ``issue(for:now:)``'s certificate chain and key as PEM text, for a server of another kind (a test's
    /// gunicorn, say).
    public func issuePEM(
        for names: [String], now: Date = Date()
    ) throws(Failure) -> (certificateChain: String, privateKey: String) {
        guard !names.isEmpty else { throw Failure(description: "a certificate needs at least one name") }
        var alternatives: [GeneralName] = []
        for name in names {
            if let address = Self.addressBytes(name) {
                alternatives.append(.ipAddress(ASN1OctetString(contentBytes: address[...])))
            } else if Self.isHostName(name) {
                alternatives.append(.dnsName(name.lowercased()))
            } else {
                throw Failure(description: "'\(name.prefix(100))' is neither a host name nor an IP address")
            }
        }
        let key = P256.Signing.PrivateKey()
        let leafPEM: String
        do {
            let issuerKey = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternatives)
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            }
            let subject = try DistinguishedName {
                CommonName(names[0])
                OrganizationName("Hammock (development only)")
            }
            let leaf = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
                // 30 days: Apple's platforms refuse leaves valid for more than 398 days, and a run is shorter.
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86400),
                issuer: certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(issuerKey))
            leafPEM = try leaf.serializeAsPEM().pemString
        } catch {
            throw Failure(description: "cannot issue a certificate for \(names.joined(separator: ", ")): \(error)")
        }
        return (leafPEM + "\n" + certificatePEM, key.pemRepresentation)
    }

    /// An IPv4 or IPv6 address's bytes (brackets allowed around IPv6); `nil` for anything else.
    static func addressBytes(_ text: String) -> [UInt8]? {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        // Into plain bytes: 4 for IPv4, 16 for IPv6, as inet_pton(3) writes them (network order).
        for (family, size) in [(AF_INET, 4), (AF_INET6, 16)] {
            var bytes = [UInt8](repeating: 0, count: 16)
            let parsed = bytes.withUnsafeMutableBytes { inet_pton(family, bare, $0.baseAddress) }
            if parsed == 1 { return Array(bytes.prefix(size)) }
        }
        return nil
    }

    /// Letters, digits, hyphens and dots, up to 253 characters, with no empty label.
    static func isHostName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253
            && !name.split(separator: ".", omittingEmptySubsequences: false).contains { $0.isEmpty }
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-")
            }
    }
}

/// write(2), under a name that does not clash with the authority's own `write`.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    Darwin.write(descriptor, buffer, count)
    #elseif canImport(Musl)
    Musl.write(descriptor, buffer, count)
    #else
    Glibc.write(descriptor, buffer, count)
    #endif
}
