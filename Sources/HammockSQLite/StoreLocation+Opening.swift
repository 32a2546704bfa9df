extension StoreLocation {
    /// Opens the store: a `MemoryStore`, or an `SQLiteStore` at the path.
    /// - Throws: `StoreError` if the SQLite file cannot be opened or is in use.
    public func makeStore() throws -> any MockStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite(let path): try SQLiteStore(path: path)
        }
    }
}
