public import Foundation
public import HammockStore

extension StoreDrivers {
    /// Adds `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?namespace=NAME]` (and `postgresql://`),
    /// opened as a ``PostgresStore``. Without a password in the URL, `PGPASSWORD` from the environment is
    /// used; neither is ever printed (``StoreLocation``'s description hides it).
    public mutating func registerPostgres(environment: [String: String] = ProcessInfo.processInfo.environment) {
        for scheme in ["postgres", "postgresql"] {
            register(scheme: scheme) { location in
                try await PostgresStore.open(try PostgresStore.Configuration(location: location, environment: environment))
            }
        }
    }
}

extension PostgresStore.Configuration {
    /// Reads a `postgres:` location: user, password (else `PGPASSWORD`), host, port (else 5432), database
    /// (else the user's name, as `psql` does) and the `namespace` query item (else `public`).
    /// - Throws: `StoreError.storageFailure` naming what is missing or malformed (never the password).
    public init(location: StoreLocation, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard location.address.hasPrefix("//"), let components = URLComponents(string: location.scheme + ":" + location.address),
            let host = components.host, !host.isEmpty
        else {
            throw StoreError.storageFailure(
                "expected \(location.scheme)://USER@HOST:PORT/DATABASE, found \(location)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw StoreError.storageFailure("\(location) names no user (postgres://USER@HOST/DATABASE)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let namespace = components.queryItems?.first(where: { $0.name == "namespace" })?.value
        if let namespace, !namespace.isEmpty { try Names.checkNamespace(namespace) }
        self.init(
            host: host, port: components.port ?? 5432, username: user,
            password: components.password ?? environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 },
            database: database.isEmpty ? user : database, namespace: namespace.flatMap { $0.isEmpty ? nil : $0 } ?? "public")
    }
}

extension StoreLocation {
    /// The same `postgres:` location in the namespace `name` (`hammock serve --namespace`); `nil` for a
    /// location of another scheme, which has no namespaces.
    public func inNamespace(_ name: String) -> StoreLocation? {
        guard scheme == "postgres" || scheme == "postgresql",
            var components = URLComponents(string: scheme + ":" + address)
        else { return nil }
        var items = (components.queryItems ?? []).filter { $0.name != "namespace" }
        items.append(URLQueryItem(name: "namespace", value: name))
        components.queryItems = items
        guard let text = components.string, let location = StoreLocation(parsing: text) else { return nil }
        return location
    }
}
