// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Optimist",
    products: [
        // The Swift API: the core plus SQLite persistence.
        .library(name: "Optimist", targets: ["Optimist"]),
        // liboptimist.so: the C ABI every other host uses.
        .library(name: "optimist", type: .dynamic, targets: ["OptimistC"]),
    ],
    targets: [
        // Pure semantics: no I/O, no Foundation.
        .target(name: "OptimistCore"),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "OptimistSQLite", dependencies: ["OptimistCore", "CSQLite"]),
        .target(name: "Optimist", dependencies: ["OptimistCore", "OptimistSQLite"]),
        .target(name: "OptimistC", dependencies: ["Optimist"]),
        .testTarget(name: "OptimistCoreTests", dependencies: ["OptimistCore"]),
    ],
    swiftLanguageModes: [.v6]
)
