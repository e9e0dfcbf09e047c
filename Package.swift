// swift-tools-version: 6.1
import PackageDescription

// SwiftPM refuses unsafe flags in packages fetched by URL; such dependents set
// OPTIMIST_PORTABLE=1 and get the same code with the runtime's exclusivity checks left on.
let portable = Context.environment["OPTIMIST_PORTABLE"] != nil
// The engine's state lives in classes behind one lock; the runtime's per-access exclusivity
// bookkeeping was a third of a mutate's instructions (callgrind), and a tenth of the C entry
// points' and the background writer's. Debug builds (and so the tests) keep the checks.
let unchecked: [SwiftSetting] = portable ? [] : [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "Optimist",
    products: [
        // The Swift API: the core plus SQLite persistence.
        // OptimistFoundation rides along so `Date` fields are stored as ISO 8601 text; it is a
        // target of its own so that liboptimist.so (OptimistC) never links Foundation.
        .library(name: "Optimist", targets: ["Optimist", "OptimistFoundation"]),
        // liboptimist.so: the C ABI every other host uses (CMake builds it with the Swift
        // runtime linked statically; see CMakeLists.txt).
        .library(name: "optimist", type: .dynamic, targets: ["OptimistC"]),
        // The pure engine alone (records, ops, JSON): the reference server in Server/ applies
        // ops with this code, so server and client never disagree on what an op means.
        .library(name: "OptimistCore", targets: ["OptimistCore"]),
    ],
    targets: [
        // Pure semantics: no I/O, no Foundation (its one dependency is the store's locks).
        .target(
            name: "OptimistCore",
            dependencies: ["OptimistThreads"],
            swiftSettings: unchecked
        ),
        // A mutex with a condition variable and threads, for the writer and the sync (the
        // library keeps Foundation and Dispatch out).
        .target(name: "OptimistThreads"),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The background writer and loader of store files.
        .target(name: "OptimistSQLite", dependencies: ["OptimistCore", "OptimistThreads", "CSQLite"], swiftSettings: unchecked),
        // The sync: the wire protocol and its schedule, over a transport port.
        .target(name: "OptimistSync", dependencies: ["OptimistCore", "OptimistThreads"], swiftSettings: unchecked),
        // The built-in HTTP transport (the system libcurl).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "OptimistCurl", dependencies: ["OptimistSync", "CCurl"], swiftSettings: unchecked),
        // The Swift API apps import.
        .target(name: "Optimist", dependencies: ["OptimistCore", "OptimistSQLite", "OptimistSync", "OptimistCurl", "COptimist"]),
        // Foundation types in records (Date as ISO 8601 text), for Swift apps only.
        .target(name: "OptimistFoundation", dependencies: ["OptimistCore"]),
        // Include/optimist.h as a C module (Sources/COptimist/module.modulemap): the ABI's types,
        // constants and version, written once in the header, for the Swift code that needs them.
        .systemLibrary(name: "COptimist"),
        // The @_cdecl entry points declared in Include/optimist.h.
        //
        // A target that uses OptimistCore's types names OptimistCore among its dependencies,
        // even where `import Optimist` re-exports it: SwiftPM's incremental build follows only
        // the dependencies named. Without OptimistCore named here, a stored property added to
        // `Store` rebuilt Optimist but not this target, whose code kept the old field offsets
        // (`optimist_client_id` then returned an empty string).
        .target(name: "OptimistC", dependencies: ["Optimist", "OptimistCore", "COptimist"], exclude: ["exports.map"], swiftSettings: unchecked),
        // The `optimist` command-line tool (inspect, outbox, explain, dump): reads store files,
        // also one another process has open, without the library's open path (see
        // Sources/OptimistCLI/FileSnapshot.swift). CMake installs it as PREFIX/bin/optimist.
        .executableTarget(name: "optimist-cli", dependencies: ["OptimistCore", "CSQLite", "COptimist"], path: "Sources/OptimistCLI"),
        // Microbenchmarks (Benchmarks/run builds this in release mode).
        .executableTarget(name: "optimist-bench", dependencies: ["Optimist", "OptimistCore", "OptimistFoundation", "CSQLite"], path: "Benchmarks/Swift"),
        // A child process the crash tests kill with SIGKILL.
        .executableTarget(name: "optimist-crash-child", dependencies: ["Optimist", "OptimistCore"], path: "Tests/CrashChild"),
        // What several test targets share: seeded randomness, op shorthands, the naive model
        // and the model-based run.
        .target(name: "OptimistTestSupport", dependencies: ["OptimistCore"], path: "Tests/Support"),
        .testTarget(name: "OptimistCoreTests", dependencies: ["OptimistCore", "OptimistTestSupport"]),
        .testTarget(name: "OptimistSQLiteTests", dependencies: ["Optimist", "OptimistCore", "OptimistTestSupport", "OptimistThreads"]),
        .testTarget(name: "OptimistTests", dependencies: ["Optimist", "OptimistCore", "OptimistFoundation", "OptimistTestSupport"]),
        .testTarget(name: "OptimistSyncTests", dependencies: ["OptimistSync", "Optimist", "OptimistCore"]),
    ],
    swiftLanguageModes: [.v6]
)

// The documentation build (scripts/docs.sh: `swift package generate-documentation`) sets
// OPTIMIST_DOCS=1 to add the DocC plugin; apps that depend on this package never resolve it.
if Context.environment["OPTIMIST_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
