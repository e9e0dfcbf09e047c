// swift-tools-version: 6.1
// The README's Swift quick start: an app package that depends on Optimist.
// In your own package use `.package(url: "<optimist repository url>", from: "1.0.0")`.
import PackageDescription

let package = Package(
    name: "HabitsQuickstart",
    dependencies: [.package(name: "Optimist", path: "../..")],
    targets: [
        .executableTarget(name: "habits-quickstart", dependencies: [.product(name: "Optimist", package: "Optimist")]),
    ]
)
