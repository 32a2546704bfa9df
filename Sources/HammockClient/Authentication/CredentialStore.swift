import Foundation
import Synchronization

#if canImport(Security)
import Security
#endif

/// Where an ``Authenticator`` keeps the tokens between requests and launches.
///
/// ``MemoryCredentialStore`` keeps them for the life of the process; on Apple platforms
/// `KeychainCredentialStore` keeps them in the keychain. A store of your own (a file, a database) is
/// two methods.
public protocol CredentialStore: Sendable {
    /// The tokens saved last, or `nil`.
    func load() async throws -> AuthTokens?
    /// Saves `tokens`, or removes what is saved when `nil` (sign-out).
    func save(_ tokens: AuthTokens?) async throws
}

/// Tokens kept in memory, gone when the process ends.
public final class MemoryCredentialStore: CredentialStore {
    private let tokens: Mutex<AuthTokens?>

    /// A store holding `tokens` (none by default).
    public init(_ tokens: AuthTokens? = nil) { self.tokens = Mutex(tokens) }

    public func load() async throws -> AuthTokens? { tokens.withLock { $0 } }

    public func save(_ tokens: AuthTokens?) async throws { self.tokens.withLock { $0 = tokens } }
}

/// Writes an authenticator's tokens to its store one at a time, and only the newest: each write carries
/// the generation of the change it records, and one older than the newest written is dropped. So a
/// refresh that finishes after a sign-out cannot put the old session back on disk.
actor CredentialWriter {
    let store: any CredentialStore
    private var written: UInt64 = 0
    private var tail: Task<Void, Never>?

    init(store: any CredentialStore) { self.store = store }

    func write(_ tokens: AuthTokens?, generation: UInt64) async {
        let previous = tail
        let store = self.store
        let task = Task {
            await previous?.value
            guard await self.claim(generation) else { return }
            // A store that cannot save keeps the session in memory only; the next launch signs in again.
            try? await store.save(tokens)
        }
        tail = task
        await task.value
    }

    private func claim(_ generation: UInt64) -> Bool {
        guard generation > written else { return false }
        written = generation
        return true
    }
}

#if canImport(Security)
/// Tokens kept in the keychain (Apple platforms): one generic-password item per `service` and
/// `account`, holding the tokens as JSON, readable after the device's first unlock and never synced
/// to other devices.
public struct KeychainCredentialStore: CredentialStore {
    /// The item's service, usually the app's bundle identifier and the API's name.
    public let service: String
    /// The item's account: one per user or API the app signs in to.
    public let account: String

    public init(service: String, account: String = "tokens") {
        self.service = service
        self.account = account
    }

    /// A keychain call that failed, with its `OSStatus`.
    public struct KeychainError: Error, Sendable, Hashable {
        public let status: Int32
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() async throws -> AuthTokens? {
        var query = self.query
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        return try JSONDecoder().decode(AuthTokens.self, from: data)
    }

    public func save(_ tokens: AuthTokens?) async throws {
        guard let tokens else {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
            return
        }
        let data = try JSONEncoder().encode(tokens)
        var status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            item[kSecValueData as String] = data
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }
}
#endif
