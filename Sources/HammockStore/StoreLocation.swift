/// Where a store lives, as a URL-like string: `memory`, `sqlite:PATH`, or any `SCHEME:ADDRESS` a store
/// module opens (``StoreDrivers``), such as `postgres://user@host:5432/db`.
///
/// ```swift
/// let location = StoreLocation(parsing: "sqlite:db.sqlite")   // or "memory"
/// var drivers = StoreDrivers()                                 // memory
/// drivers.registerSQLite()                                     // with HammockSQLite
/// let store = try drivers.open(location!)
/// ```
/// Its ``description`` never shows a password given in the address (`postgres://ada:***@db/app`).
public struct StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// What opens it: `memory`, `sqlite`, `postgres`, … (lowercased).
    public var scheme: String
    /// The rest: a path for `sqlite`, a URL's authority and path for a database server; empty for `memory`.
    public var address: String

    /// A location of `scheme` at `address`.
    public init(scheme: String, address: String) {
        self.scheme = scheme.lowercased()
        self.address = address
    }

    /// In memory: gone when the process ends.
    public static let memory = StoreLocation(scheme: "memory", address: "")

    /// An SQLite file.
    public static func sqlite(path: String) -> StoreLocation { StoreLocation(scheme: "sqlite", address: path) }

    /// Parses `memory`, or `SCHEME:ADDRESS` with a scheme as URLs have them (a letter, then letters,
    /// digits, `+`, `-` and `.`) and an address that is not empty.
    public init?(parsing text: String) {
        if text == "memory" {
            self = .memory
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        let address = text[text.index(after: colon)...]
        guard let first = scheme.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
            }),
            !address.isEmpty
        else { return nil }
        self.init(scheme: String(scheme), address: String(address))
    }

    /// `memory` or `SCHEME:ADDRESS`, a password in the address replaced by `***`.
    public var description: String {
        guard scheme != "memory" || !address.isEmpty else { return "memory" }
        return "\(scheme):\(Self.redactingPassword(address))"
    }

    /// `//user:secret@host/db` → `//user:***@host/db`; anything else unchanged.
    static func redactingPassword(_ address: String) -> String {
        guard address.hasPrefix("//"), let at = address.firstIndex(of: "@") else { return address }
        let userInfo = address[address.index(address.startIndex, offsetBy: 2)..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return address }
        return "//" + userInfo[..<colon] + ":***" + address[at...]
    }
}

/// Opens stores by the scheme of their ``StoreLocation``: an open set, to which each store module adds
/// its own (`HammockSQLite` adds `sqlite:` with `registerSQLite()`), so `hammock serve --store` knows
/// every store the program links and the engine depends on none of them.
///
/// ```swift
/// var drivers = StoreDrivers()
/// drivers.register(scheme: "redis") { location in try RedisStore(url: location.address) }
/// ```
public struct StoreDrivers: Sendable {
    /// Opens a store at a location of the driver's scheme.
    public typealias Open = @Sendable (StoreLocation) async throws -> any MockStore

    private var drivers: [String: Open]

    /// The built-in drivers: `memory`.
    public init() { drivers = ["memory": { _ in MemoryStore() }] }

    /// Adds (or replaces) the driver of `scheme`.
    public mutating func register(scheme: String, _ open: @escaping Open) { drivers[scheme.lowercased()] = open }

    /// The schemes known, sorted.
    public var schemes: [String] { drivers.keys.sorted() }

    /// Opens the store at `location`.
    /// - Throws: ``StoreError/unknownScheme(_:known:)`` for a scheme no driver opens, or the driver's error.
    public func open(_ location: StoreLocation) async throws -> any MockStore {
        guard let open = drivers[location.scheme] else { throw StoreError.unknownScheme(location.scheme, known: schemes) }
        return try await open(location)
    }
}
