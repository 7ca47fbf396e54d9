// swift-tools-version: 6.1

// An app's package as a user writes it: its flags live in Sources/Shop/vane-flags.json, and
// VaneFlagsPlugin generates the typed `Flags` API from it on every build.
// Build and test it with:  swift test --package-path Examples/FlagsPackage

import PackageDescription

let package = Package(
    name: "Shop",
    platforms: [.macOS(.v14), .iOS(.v15)],
    dependencies: [
        // In your app: .package(url: "https://github.com/<owner>/vane.git", from: "0.1.0")
        .package(name: "vane", path: "../..")
    ],
    targets: [
        .target(
            name: "Shop",
            dependencies: [.product(name: "Vane", package: "vane")],
            plugins: [.plugin(name: "VaneFlagsPlugin", package: "vane")]
        ),
        .testTarget(
            name: "ShopTests",
            dependencies: ["Shop", .product(name: "VaneTesting", package: "vane")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
