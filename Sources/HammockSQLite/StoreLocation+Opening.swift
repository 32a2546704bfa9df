extension StoreDrivers {
    /// Adds `sqlite:PATH`, opened as an ``SQLiteStore``.
    public mutating func registerSQLite() {
        register(scheme: "sqlite") { location in try SQLiteStore(path: location.address) }
    }

    /// The drivers of this package's stores: `memory` and `sqlite`.
    public static var withSQLite: StoreDrivers {
        var drivers = StoreDrivers()
        drivers.registerSQLite()
        return drivers
    }
}

extension StoreLocation {
    /// Opens the store with the drivers of this package (``StoreDrivers/withSQLite``).
    /// - Throws: `StoreError` if the SQLite file cannot be opened or is in use, or the scheme is unknown.
    public func makeStore() async throws -> any MockStore { try await StoreDrivers.withSQLite.open(self) }
}
