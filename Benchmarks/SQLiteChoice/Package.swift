// swift-tools-version:6.2
// A standalone measurement, kept out of the main package so its build never compiles sqlite-nio:
// the same point reads and inserts through GRDB and through sqlite-nio, in one run.
import PackageDescription

let package = Package(
    name: "SQLiteChoice",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", exact: "1.13.2"),
    ],
    targets: [
        .executableTarget(
            name: "SQLiteChoice",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ]
        )
    ]
)
