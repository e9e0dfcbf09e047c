// swift-tools-version: 6.1
// The README's Swift quick start: an app package that depends on Optimist.
// In your own package use `.package(url: "<optimist repository url>", from: "1.3.0")`.
import PackageDescription

let package = Package(
    name: "HabitsQuickstart",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(name: "Optimist", path: "../..")],
    targets: [
        .executableTarget(name: "habits-quickstart", dependencies: [.product(name: "Optimist", package: "Optimist")]),
        // Seed 000's screen model ported onto the store: Observation, a live query, the dedupe
        // guard, rollback on failure with its reason.
        .executableTarget(name: "habits-viewmodel", dependencies: [.product(name: "Optimist", package: "Optimist")]),
    ]
)
