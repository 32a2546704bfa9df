// swift-tools-version:6.2
import CompilerPluginSupport
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Hammock",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HammockJSON", targets: ["HammockJSON"]),
        .library(name: "HammockStore", targets: ["HammockStore"]),
        .library(name: "HammockSchema", targets: ["HammockSchema"]),
        .library(name: "HammockServer", targets: ["HammockServer"]),
        .library(name: "HammockHTTPServer", targets: ["HammockHTTPServer"]),
        .library(name: "HammockSQLite", targets: ["HammockSQLite"]),
        .library(name: "HammockPostgres", targets: ["HammockPostgres"]),
        .library(name: "HammockModel", targets: ["HammockModel"]),
        .library(name: "HammockClient", targets: ["HammockClient"]),
        .library(name: "HammockAsyncHTTPClient", targets: ["HammockAsyncHTTPClient"]),
        .library(name: "HammockResources", targets: ["HammockResources"]),
        .library(name: "HammockTesting", targets: ["HammockTesting"]),
        .library(name: "HammockURLSession", targets: ["HammockURLSession"]),
        .library(name: "HammockTestSupport", targets: ["HammockTestSupport"]),
        .library(name: "HammockStoreTesting", targets: ["HammockStoreTesting"]),
        .library(name: "HammockServerTesting", targets: ["HammockServerTesting"]),
        .library(name: "HammockOpenAPI", targets: ["HammockOpenAPI"]),
        .library(name: "HammockConsole", targets: ["HammockConsole"]),
        .library(name: "HammockProxy", targets: ["HammockProxy"]),
        .library(name: "HammockJWT", targets: ["HammockJWT"]),
        .executable(name: "hammock", targets: ["hammock"]),
    ],
    dependencies: [
        // Lower bounds are the versions the suite runs against; anything newer within the major version
        // is accepted, so an app that depends on other versions of these packages can still use Hammock.
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // A range, as macro libraries declare it, so that two of them can coexist: 602 matches Swift 6.2
        // (the oldest toolchain this manifest accepts), 603 matches Swift 6.3.
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "602.0.0"..<"604.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // TLS on the mock's own side (--https): NIOSSL serves it, swift-certificates makes the local CA and
        // its leaves, swift-crypto their keys. All three were already in the graph through AsyncHTTPClient
        // and postgres-nio.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // HTTP/2 on the HTTPS port, negotiated by ALPN beside HTTP/1.1. Already in the graph through
        // AsyncHTTPClient.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // The mock's access tokens (HammockJWT): JWTs signed and verified (ES256, RS256, HS256) and their
        // JWKS. Its Crypto and X509 are already in the graph through swift-certificates.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing.git", from: "0.7.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Reads OpenAPI 3.0 and 3.1 documents (a mock from a team's document). No traits: its default one
        // (loading external references) builds with more concurrency and is not used here.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        // Only for a test: the OpenAPI generator's client (its code committed) through URLSession in process.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
    ],
    targets: [
        // JSON value, parser and serializer. No dependencies: every other part builds on it.
        .target(name: "HammockJSON", swiftSettings: swiftSettings),

        // What travels on the wire, once for client, server and resources: percent-encoding, HTTP dates,
        // URL path patterns. No dependencies.
        .target(name: "HammockWire", swiftSettings: swiftSettings),

        // Model mapping: recipes from JSON paths to model properties, transformers, the oven, boxes.
        .target(name: "HammockModel", dependencies: ["HammockJSON"], swiftSettings: swiftSettings),

        // The declarative client's runtime: transport, request building, interceptors, errors.
        // It never depends on the server's packages.
        .macro(
            name: "HammockClientMacros",
            dependencies: [
                "HammockWire",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HammockClient",
            dependencies: [
                "HammockClientMacros",
                "HammockJSON",
                "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The AsyncHTTPClient transport, its own product so URLSession users never build SwiftNIO.
        .target(
            name: "HammockAsyncHTTPClient",
            dependencies: [
                "HammockClient", "HammockWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // The mock in front of a real backend: what it does not mock is forwarded (AsyncHTTPClient), its
        // own target so the engine and its users need no HTTP client.
        .target(
            name: "HammockProxy",
            dependencies: [
                "HammockServer", "HammockStore", "HammockJSON", "HammockWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // Observable resources: one canonical object per URL with its latest data, error and loading
        // state, on the client's transport.
        .target(
            name: "HammockResources",
            dependencies: [
                "HammockClient",
                "HammockJSON",
                "HammockModel",
                "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),

        // Test support with no dependencies: a manual clock, eventually, a seeded generator, a recording
        // HTTP server for transport tests.
        .target(name: "HammockTestSupport", swiftSettings: swiftSettings),

        // The bridge from the client to the mock server in process (re-exports HammockTestSupport).
        .target(
            name: "HammockTesting",
            dependencies: ["HammockClient", "HammockServer", "HammockURLSession", "HammockTestSupport", "HammockWire"],
            swiftSettings: swiftSettings),

        // Any URLSession code to the mock server in process: a URLProtocol a configuration carries.
        // Needs only the engine and Foundation, not the client.
        .target(
            name: "HammockURLSession",
            dependencies: ["HammockServer", "HammockWire", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: swiftSettings),

        // A mock server per test: the `.mockServer(…)` trait (Swift Testing), a start/stop pair for
        // XCTest, the launch environment of a UI test's app. Reaches the server in process or on loopback.
        .target(
            name: "HammockServerTesting",
            dependencies: [
                "HammockServer", "HammockHTTPServer", "HammockURLSession", "HammockJSON", "HammockProxy", "HammockJWT",
                "HammockWire",
            ],
            swiftSettings: swiftSettings),

        // What a store is, apart from any server, as fluent-kit stands apart from its drivers: resources
        // and their schemas, the store protocol, a write as one value and the integrity rules over a few
        // primitives, the list query language and its evaluation, the in-memory tables and indexes, the
        // memory store, store locations and drivers. A store driver imports this, not the engine.
        .target(name: "HammockStore", dependencies: ["HammockJSON", "HammockWire"], swiftSettings: swiftSettings),

        // JSON Schema as OpenAPI documents write it: values checked against schemas (a request against its
        // API document), regular expressions matched in linear time and read to make strings.
        .target(name: "HammockSchema", dependencies: ["HammockJSON", "HammockWire"], swiftSettings: swiftSettings),

        // The mock REST server's engine: resources, the pipeline (middleware, router, routes),
        // controllers, serializers, the memory store, configuration files, in-process `respond(to:)`.
        // No SwiftNIO, no SQLite: an app's tests that use the mock in process build only this.
        .target(
            name: "HammockServer",
            dependencies: [
                "HammockStore",
                "HammockSchema",
                "HammockJSON",
                "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The mock's access tokens as JWTs (jwt-kit), for a server with a login: its own target, so that
        // the engine and an app's in-process tests build no cryptography.
        .target(
            name: "HammockJWT",
            dependencies: [
                "HammockServer", "HammockJSON", "HammockWire",
                .product(name: "JWTKit", package: "jwt-kit"),
                // RSA key generation for RS256 (jwt-kit reads RSA keys but makes none).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // Serving the engine over HTTP/1.1 on a socket: a SwiftNIO pipeline of Hammock's own.
        .target(
            name: "HammockHTTPServer",
            dependencies: [
                "HammockServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),

        // The mock described: an OpenAPI 3.1 document from its resources, routes and stubs; a mock from an
        // OpenAPI 3.0 or 3.1 document; YAML configuration files. Its own module (Yams, OpenAPIKit), which
        // the CLI uses and HammockServer never needs.
        .target(
            name: "HammockOpenAPI",
            dependencies: [
                "HammockServer", "HammockSchema", "HammockJSON", "HammockWire", .product(name: "Yams", package: "Yams"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),

        // The console: the page a browser gets at the admin path (resources, data, stubs, the live log,
        // faults), its files embedded in the module. The CLI uses it; HammockServer never needs it.
        .target(
            name: "HammockConsole",
            dependencies: ["HammockServer", .product(name: "HTTPTypes", package: "swift-http-types")],
            resources: [
                .embedInCode("Resources/console.html"), .embedInCode("Resources/console.js"),
                .embedInCode("Resources/console.css"),
            ],
            swiftSettings: swiftSettings
        ),

        // The SQLite store (GRDB): records that survive a restart.
        .target(
            name: "HammockSQLite",
            dependencies: ["HammockStore", "HammockJSON", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),

        // The PostgreSQL store (postgres-nio): one database that several servers share. Its own module, so
        // that only those who use it build the driver.
        .target(
            name: "HammockPostgres",
            dependencies: [
                "HammockStore", "HammockJSON",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The store contract as checks a store's tests run (Swift Testing): every store of Hammock's
        // runs them, and so can a store of yours.
        .target(
            name: "HammockStoreTesting", dependencies: ["HammockStore", "HammockJSON"], swiftSettings: swiftSettings),

        // The thin command-line front end: `hammock serve CONFIG`.
        .executableTarget(
            name: "hammock",
            dependencies: [
                "HammockServer",
                "HammockHTTPServer",
                "HammockSQLite",
                "HammockPostgres",
                "HammockOpenAPI",
                "HammockConsole",
                "HammockJSON",
                "HammockProxy",
                "HammockJWT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // `swift run hammock-tour`: the four parts talking to each other; run by the CLI tests. No product:
        // an executable target of the root package can be run here, and a package that depends on
        // Hammock never sees it.
        .executableTarget(
            name: "hammock-tour",
            dependencies: [
                "HammockServer", "HammockHTTPServer", "HammockClient", "HammockResources", "HammockModel", "HammockJSON",
            ],
            path: "Examples/Tour",
            swiftSettings: swiftSettings
        ),

        // `people-browser`: a command-line app on the typed road (paged list, typed person, optimistic
        // rename, sign-in and sign-out) against the mock of the file beside it; run by the CLI tests.
        // No product.
        .executableTarget(
            name: "people-browser",
            dependencies: [
                "HammockClient", "HammockResources", "HammockServer", "HammockHTTPServer", "HammockJWT",
            ],
            path: "Examples/PeopleBrowser", exclude: ["people-browser.json"], swiftSettings: swiftSettings),

        // `hammock-ui-stand-in`: a separate process standing in for an app under a UI test (reads
        // HAMMOCK_BASE_URL, calls the server with URLSession); run by the CLI tests. No product.
        .executableTarget(
            name: "hammock-ui-stand-in", dependencies: ["HammockClient"], path: "Examples/UITestStandIn",
            swiftSettings: swiftSettings),

        .testTarget(
            name: "HammockJSONTests", dependencies: ["HammockJSON", "HammockTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HammockSchemaTests", dependencies: ["HammockSchema", "HammockJSON", "HammockTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HammockWireTests", dependencies: ["HammockWire", "HammockTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HammockClientTests",
            dependencies: [
                "HammockClient", "HammockTestSupport", "HammockJSON", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings),
        // The client against the mock server, in process and over loopback: the parts tested against each other.
        .testTarget(
            name: "HammockClientServerTests",
            dependencies: [
                "HammockClient", "HammockTesting", "HammockServer", "HammockHTTPServer", "HammockJSON", "HammockURLSession",
                "HammockServerTesting", "HammockJWT", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // Code no one here wrote against the mock in process: swift-openapi-generator's client for
        // openapi.yaml (Generated/, made by scripts/generate-openapi-client) on swift-openapi-urlsession.
        .testTarget(
            name: "HammockOpenAPIClientTests",
            dependencies: [
                "HammockServer", "HammockServerTesting", "HammockURLSession", "HammockJSON",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockOpenAPITests",
            dependencies: [
                "HammockOpenAPI", "HammockServer", "HammockJSON", "HammockSchema", "HammockTestSupport", "HammockJWT",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockAsyncHTTPClientTests",
            dependencies: [
                "HammockAsyncHTTPClient", "HammockClient", "HammockServer", "HammockHTTPServer", "HammockTestSupport",
                "HammockTesting", "HammockJSON",
                "HammockResources", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockProxyTests",
            dependencies: [
                "HammockProxy", "HammockServer", "HammockHTTPServer", "HammockTestSupport", "HammockJSON", "HammockServerTesting",
                "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockClientMacrosTests",
            dependencies: [
                "HammockClientMacros",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockResourcesTests",
            dependencies: [
                "HammockResources", "HammockTesting", "HammockServer", "HammockHTTPServer", "HammockClient", "HammockJSON",
                "HammockModel", "HammockWire", "HammockJWT", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HammockModelTests", dependencies: ["HammockModel", "HammockJSON"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HammockServerTests",
            dependencies: [
                "HammockServer",
                "HammockStore",
                "HammockConsole",
                "HammockHTTPServer",
                "HammockSQLite",
                "HammockPostgres",
                "HammockStoreTesting",
                "HammockJSON",
                "HammockModel",
                "HammockTestSupport",
                "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "HammockJWT",
                // Forges tokens for the hostile cases (HMAC keyed on the public key).
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HammockCLITests",
            dependencies: [
                "hammock", "hammock-tour", "hammock-ui-stand-in", "people-browser", "HammockJSON", "HammockClient",
                "HammockResources",
                "HammockTesting", "HammockServerTesting", "HammockServer", "HammockOpenAPI",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// Benchmarks, built only by `scripts/bench` (HAMMOCK_BENCHMARKS=1): no product of the library, and the
// Hummingbird baseline they measure against is no dependency of it.
if Context.environment["HAMMOCK_BENCHMARKS"] != nil {
    package.dependencies.append(
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []))
    package.targets += [
        // `swift run -c release hammock-bench`: ratios against baselines measured in the same run.
        .executableTarget(
            name: "HammockBenchmarks",
            dependencies: [
                "HammockJSON",
                "HammockModel",
                "HammockServer",
                "HammockHTTPServer",
                "HammockSQLite",
                "HammockTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/HammockBenchmarks",
            swiftSettings: swiftSettings
        ),

        // `swift run -c release hammock-client-bench`: a separate product, so that the server benchmark's
        // release build never compiles swift-syntax for the macro.
        .executableTarget(
            name: "HammockClientBenchmarks",
            dependencies: [
                "HammockClient", "HammockTesting", "HammockServer", "HammockHTTPServer", "HammockURLSession",
                "HammockAsyncHTTPClient",
            ],
            path: "Benchmarks/HammockClientBenchmarks",
            swiftSettings: swiftSettings
        ),

        // `scripts/bench resources`: observable resources against hand-written baselines.
        .executableTarget(
            name: "HammockResourcesBenchmarks",
            dependencies: [
                "HammockResources", "HammockClient", "HammockJSON", "HammockTesting", "HammockServer", "HammockHTTPServer",
            ],
            path: "Benchmarks/HammockResourcesBenchmarks",
            swiftSettings: swiftSettings
        ),

        // `scripts/bench http2-frames`: HTTP/2 streams answered from frames, without a channel per stream.
        .executableTarget(
            name: "HammockHTTP2FramesBenchmark",
            dependencies: [
                "HammockServer",
                "HammockHTTPServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Benchmarks/HammockHTTP2FramesBenchmark",
            swiftSettings: swiftSettings
        ),
    ]
    package.products += [
        .executable(name: "hammock-http2-frames", targets: ["HammockHTTP2FramesBenchmark"]),
        .executable(name: "hammock-bench", targets: ["HammockBenchmarks"]),
        .executable(name: "hammock-client-bench", targets: ["HammockClientBenchmarks"]),
        .executable(name: "hammock-resources-bench", targets: ["HammockResourcesBenchmarks"]),
    ]
}

// Fuzz targets, one small executable each, built only by `scripts/fuzz` (HAMMOCK_FUZZ=1, libFuzzer and
// AddressSanitizer): they are no product of the library.
if Context.environment["HAMMOCK_FUZZ"] != nil {
    let fuzzTargets: [(product: String, target: String, folder: String, dependencies: [Target.Dependency])] = [
        ("fuzz-json", "FuzzJSON", "JSON", ["HammockJSON"]),
        ("fuzz-http-dates", "FuzzHTTPDates", "HTTPDates", ["HammockWire"]),
        ("fuzz-paths", "FuzzPaths", "Paths", ["HammockWire"]),
        ("fuzz-request-bodies", "FuzzRequestBodies", "RequestBodies", ["HammockServer", "HammockSQLite", "HammockJSON"]),
        ("fuzz-configuration", "FuzzConfiguration", "Configuration", ["HammockServer", "HammockJSON"]),
        ("fuzz-url-patterns", "FuzzURLPatterns", "URLPatterns", ["HammockWire"]),
        ("fuzz-queries", "FuzzQueries", "Queries", ["HammockServer", "HammockSQLite", "HammockJSON"]),
        ("fuzz-openapi", "FuzzOpenAPI", "OpenAPI", ["HammockOpenAPI", "HammockServer", "HammockJSON"]),
        ("fuzz-generate-swift", "FuzzGenerateSwift", "GenerateSwift", ["HammockOpenAPI", "HammockServer", "HammockJSON"]),
        ("fuzz-schemas", "FuzzSchemas", "Schemas", ["HammockSchema", "HammockJSON", "HammockTestSupport"]),
        (
            "fuzz-tokens", "FuzzTokens", "Tokens",
            ["HammockServer", "HammockJSON", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        ("fuzz-har", "FuzzHAR", "HAR", ["HammockProxy", "HammockServer", "HammockJSON"]),
        (
            "fuzz-redaction", "FuzzRedaction", "Redaction",
            ["HammockProxy", "HammockServer", "HammockJSON", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        (
            "fuzz-proxy", "FuzzProxy", "Proxy",
            [
                "HammockProxy", "HammockServer", "HammockHTTPServer", "HammockJSON", "HammockWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        (
            "fuzz-replay", "FuzzReplay", "Replay",
            [
                "HammockProxy", "HammockServer", "HammockJSON", "HammockWire", "HammockSQLite", "HammockStore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Fuzz/FuzzSupport", swiftSettings: swiftSettings))
    for fuzz in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: fuzz.target, dependencies: ["FuzzSupport"] + fuzz.dependencies, path: "Fuzz/\(fuzz.folder)",
                swiftSettings: swiftSettings))
        package.products.append(.executable(name: fuzz.product, targets: [fuzz.target]))
    }
}

// The clients `scripts/check-generated-clients` generates (HAMMOCK_GENERATED_CLIENTS="People Shop …", each
// in .build/generated-clients/NAME), built in the tests' build folder: a scratch package of their own built
// swift-syntax again for the macro (100 s of CI's time). Inside the package they could see HammockClient's
// `package` declarations: the script also typechecks each as an app's module, where they cannot.
if let names = Context.environment["HAMMOCK_GENERATED_CLIENTS"] {
    for name in names.split(separator: " ").map(String.init) {
        package.targets.append(
            .executableTarget(name: name, dependencies: ["HammockClient"], path: ".build/generated-clients/\(name)"))
    }
}
