import HammockJSON
public import HammockStore
import Testing

/// What every `MockStore` must do, as checks a store's own tests run: Hammock's stores run them all,
/// and a store of your own proves it behaves as they do (as fluent-kit ships its benchmarker for drivers).
///
/// Each check opens a store with your factory, adds four resources (people with integer keys, their
/// cars, categories with string keys, and products under categories), runs, and closes the store.
/// Failures are Swift Testing issues, recorded against the test that runs the check:
///
/// ```swift
/// import HammockStoreTesting
/// import Testing
///
/// @Test(arguments: StoreContract.checks)
/// func keepsTheStoreContract(_ check: StoreContract.Check) async throws {
///     try await check.run { try MyStore(directory: makeTemporaryDirectory()) }
/// }
/// ```
///
/// The factory must give an empty store each time; it is closed after its check.
public enum StoreContract {
    /// One promise of the contract, named by what it checks.
    public struct Check: Sendable, CustomStringConvertible {
        /// What the check proves, as a sentence.
        public let name: String
        let body: @Sendable (Subject) async throws -> Void

        init(_ name: String, _ body: @escaping @Sendable (Subject) async throws -> Void) {
            self.name = name
            self.body = body
        }

        public var description: String { name }

        /// Runs the check on a store that `makeStore` opens, then closes it (also when the check throws).
        public func run(on makeStore: @Sendable () async throws -> any MockStore) async throws {
            let store = try await makeStore()
            do {
                try await body(Subject(store: store))
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }

    /// Every check, in a stable order.
    public static var checks: [Check] { records + writes + queries + changes }

    /// The resources every check adds, parents first.
    public static let resources: [MockResource] = [Fixtures.people, Fixtures.cars, Fixtures.categories, Fixtures.products]
}

/// A store under test with the contract's resources added, and their schemas.
struct Subject: Sendable {
    let store: any MockStore
    let people: ResourceSchema
    let cars: ResourceSchema
    let categories: ResourceSchema
    let products: ResourceSchema

    var schemas: [ResourceSchema] { [people, cars, categories, products] }

    init(store: any MockStore) async throws {
        self.store = store
        // Resolved and added as a server's start does, parents first.
        let schemas = try ResourceSchema.resolving(StoreContract.resources)
        for schema in schemas { try await store.addResource(schema) }
        func named(_ name: String) throws -> ResourceSchema { try #require(schemas.first { $0.name == name }) }
        people = try named("people")
        cars = try named("cars")
        categories = try named("categories")
        products = try named("products")
    }
}

enum Fixtures {
    static let people = MockResource(
        "people", fields: ["name": .string, "numberOfKids": .integer, "kilometersWalked": .float, "avatar": .blob])
    static let cars = MockResource("cars", fields: ["name": .string, "color": .string], parents: ["people"])
    static let categories = MockResource(
        "categories", fields: ["slug": .string, "title": .string], primaryKey: "slug")
    static let products = MockResource(
        "products",
        fields: ["name": .string, "price": .float, "inStock": .boolean, "releasedOn": .date, "details": .json],
        parents: ["categories"])
}

extension ConditionalWrite {
    /// `written`, `missing` or `changed`, for expectations.
    var kind: String {
        switch self {
        case .written: "written"
        case .missing: "missing"
        case .changed: "changed"
        case .refused: "refused"
        }
    }
}
