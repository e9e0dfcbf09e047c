// swift-tools-version: 6.1
import PackageDescription

// No target carries unsafe flags: SwiftPM refuses them in a package fetched by URL, so an app
// adds this package by URL and builds in debug and release with nothing set. The C library
// (liboptimist.so, built by CMake: cmake/OptimistSwiftLibrary.cmake) passes
// -enforce-exclusivity=unchecked on its own command line instead, where the runtime's
// per-access exclusivity bookkeeping was a large share of a C tap's instructions
// (BENCHMARKS.md, "Exclusivity checks").

let package = Package(
    name: "Optimist",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2), .macCatalyst(.v18)],
    products: [
        // The Swift API: the engine, SQLite persistence and the sync.
        // OptimistFoundation rides along so `Date` fields are stored as ISO 8601 text; it is a
        // target of its own so that liboptimist.so (OptimistC) never links Foundation.
        .library(name: "Optimist", targets: ["Optimist", "OptimistFoundation"]),
        // liboptimist.so: the C ABI every other host uses (CMake builds it with the Swift
        // runtime linked statically; see CMakeLists.txt).
        .library(name: "optimist", type: .dynamic, targets: ["OptimistC"]),
        // The model alone (keys, records and JSON, ops): the reference server in Server/ applies
        // ops with this code, so server and client never disagree on what an op means.
        .library(name: "OptimistModel", targets: ["OptimistModel"]),
        // The wire protocol, written once: the sync sends and checks with it, the reference
        // server checks and answers with it.
        .library(name: "OptimistProtocol", targets: ["OptimistProtocol"]),
        // The sync over URLSession (Apple platforms use it by default; on Linux it comes with
        // FoundationNetworking, for an app that wants it).
        .library(name: "OptimistURLSession", targets: ["OptimistURLSession"]),
    ],
    targets: [
        // The layers, bottom up. Tests/Layering/layers.txt writes the allowed imports down once;
        // Tests/Layering/check_layers.py (run by scripts/test.sh) fails when a module imports one
        // that is not below it, or when a target here names such a dependency.
        //
        // A mutex with a condition variable and threads, for the store, the writer and the sync
        // (the library keeps Foundation and Dispatch out).
        .target(name: "OptimistThreads"),
        // The model: keys, records and JSON, ops, errors, mutation and status types, the
        // packed-ops format. No I/O, no Foundation, no threads.
        .target(name: "OptimistModel"),
        // The engine (confirmed state behind a storage port, pending chains, outbox, views,
        // subscriptions, freshness) and `Store` (threads, locks, publication). No I/O.
        .target(name: "OptimistCore", dependencies: ["OptimistModel", "OptimistThreads"]),
        // The wire protocol: typed push and pull messages, each with its encoding and its checked
        // decoding, for the client's sync and the server alike.
        .target(name: "OptimistProtocol", dependencies: ["OptimistModel"]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Store files: the background writer, the loader, the file format (also read by the CLI).
        .target(name: "OptimistSQLite", dependencies: ["OptimistModel", "OptimistCore", "OptimistThreads", "CSQLite"]),
        // The sync: its schedule and thread, over a transport port.
        .target(name: "OptimistSync", dependencies: ["OptimistModel", "OptimistProtocol", "OptimistCore", "OptimistThreads"]),
        // The built-in HTTP transport (the system libcurl).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "OptimistCurl", dependencies: ["OptimistModel", "OptimistSync", "CCurl"]),
        // Opening a store (memory or file) and starting the default sync: what the two hosts
        // below share.
        // libcurl is the transport where it is the system's HTTP stack (Linux); Apple platforms
        // use URLSession (OptimistURLSession), and link no libcurl.
        .target(name: "OptimistOpen", dependencies: [
            "OptimistModel", "OptimistCore", "OptimistSQLite", "OptimistSync", "OptimistThreads",
            .target(name: "OptimistCurl", condition: .when(platforms: [.linux, .android])),
            .target(name: "OptimistURLSession", condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS, .macCatalyst])),
        ]),
        // The URLSession transport (Foundation): the default on Apple platforms, and a product of
        // its own elsewhere, for an app that wants its own session.
        .target(name: "OptimistURLSession", dependencies: ["OptimistModel", "OptimistSync"]),
        // The Swift API apps import: re-exports the model, the store and the sync; Codable
        // records and typed collections, observation, async waits.
        .target(name: "Optimist", dependencies: ["OptimistModel", "OptimistThreads", "OptimistCore", "OptimistSync", "OptimistOpen"]),
        // Foundation types in records (Date as ISO 8601 text), for Swift apps only.
        .target(name: "OptimistFoundation", dependencies: ["Optimist", "OptimistModel"]),
        // Include/optimist.h as a C module (Sources/COptimist/module.modulemap): the ABI's types,
        // constants and version, written once in the header, for the Swift code that needs them.
        .systemLibrary(name: "COptimist"),
        // The @_cdecl entry points declared in Include/optimist.h, a sibling of the Swift API.
        //
        // A target names every module whose types it uses among its dependencies: SwiftPM's
        // incremental build follows only the dependencies named (a stale field offset of `Store`
        // once made `optimist_client_id` return an empty string).
        .target(name: "OptimistC", dependencies: ["OptimistModel", "OptimistCore", "OptimistSync", "OptimistOpen", "COptimist"], exclude: ["exports.map"]),
        // The `optimist` command-line tool (inspect, outbox, explain, dump): reads store files
        // through OptimistSQLite's schema and decoders, also one another process has open, without
        // the library's open path (see Sources/OptimistCLI/FileSnapshot.swift). CMake installs it
        // as PREFIX/bin/optimist.
        .executableTarget(name: "optimist-cli", dependencies: ["OptimistModel", "OptimistSQLite", "COptimist"], path: "Sources/OptimistCLI"),
        // Microbenchmarks (Benchmarks/run builds this in release mode).
        .executableTarget(name: "optimist-bench", dependencies: ["Optimist", "OptimistModel", "OptimistCore", "OptimistSQLite", "OptimistOpen", "OptimistFoundation", "CSQLite"], path: "Benchmarks/Swift"),
        // A sync client over URLSessionTransport, for the end-to-end suite (Tests/e2e/test_urlsession.py).
        .executableTarget(name: "optimist-urlsession-client", dependencies: ["Optimist", "OptimistURLSession"], path: "Tests/URLSessionClient"),
        // A child process the crash tests kill with SIGKILL.
        .executableTarget(name: "optimist-crash-child", dependencies: ["OptimistModel", "OptimistCore", "OptimistSQLite", "OptimistOpen", "OptimistC"], path: "Tests/CrashChild"),
        // What several test targets share: seeded randomness, op shorthands, the naive model
        // and the model-based run.
        .target(name: "OptimistTestSupport", dependencies: ["OptimistModel", "OptimistCore"], path: "Tests/Support"),
        .testTarget(name: "OptimistModelTests", dependencies: ["OptimistModel", "OptimistTestSupport"]),
        .testTarget(name: "OptimistProtocolTests", dependencies: ["OptimistModel", "OptimistProtocol"]),
        .testTarget(name: "OptimistCoreTests", dependencies: ["OptimistModel", "OptimistCore", "OptimistTestSupport", "OptimistThreads"]),
        .testTarget(name: "OptimistSQLiteTests", dependencies: ["OptimistModel", "OptimistCore", "OptimistSQLite", "OptimistOpen", "OptimistC", "OptimistTestSupport", "OptimistThreads", "CSQLite"]),
        .testTarget(name: "OptimistSyncTests", dependencies: ["OptimistModel", "OptimistProtocol", "OptimistCore", "OptimistSync", "OptimistOpen", "OptimistThreads"]),
        .testTarget(name: "OptimistTests", dependencies: ["Optimist", "OptimistModel", "OptimistCore", "OptimistFoundation", "OptimistC", "OptimistTestSupport"]),
        .testTarget(name: "OptimistCTests", dependencies: ["OptimistC", "OptimistModel", "COptimist"]),
    ],
    swiftLanguageModes: [.v6]
)

// The documentation build (scripts/docs.sh: `swift package generate-documentation`) sets
// OPTIMIST_DOCS=1 to add the DocC plugin; apps that depend on this package never resolve it.
if Context.environment["OPTIMIST_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
