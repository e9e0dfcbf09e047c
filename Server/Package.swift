// swift-tools-version: 6.1
import PackageDescription

// The reference sync server lives in its own package so that apps using the library never
// resolve a server's dependencies (HTTP, PostgreSQL). It applies ops with the root package's
// OptimistModel and speaks the root package's OptimistProtocol, so server and client agree on
// what every op and every message means.
// A path dependency's identity is its folder's name, lowercased: the checkout's own name
// (main, optimist, a CI clone's folder ...), not a fixed one.
let rootPackage = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "optimist"

let package = Package(
    name: "OptimistServer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "optimist-server", targets: ["optimist-server"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // JWT signatures: HMAC and P-256 (Crypto), RSA (CryptoExtras).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // The system's libsqlite3 (the root package's CSQLite target is not a product, and two
        // targets of one name may not meet in a package graph).
        .systemLibrary(name: "CServerSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "optimist-server",
            dependencies: [
                .product(name: "OptimistModel", package: rootPackage),
                .product(name: "OptimistProtocol", package: rootPackage),
                "CServerSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // The connection guard's channel handlers (raw bytes and HTTP parts).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
