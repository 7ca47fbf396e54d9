// swift-tools-version: 6.1

// A service's package as a user writes it: the server SDK from the repository with the `ServerSDK`
// trait (docs/SERVER-SDK.md, "Setting it up"). scripts/check-server-sdk-by-url builds it against a
// clone of the repository by URL and runs it against a real `vane serve`.

import PackageDescription

let package = Package(
    name: "Shop",
    platforms: [.macOS(.v15)],
    dependencies: [
        // In your service: .package(url: "https://github.com/<owner>/vane.git", from: "0.1.0", traits: ["ServerSDK"])
        .package(name: "vane", path: "../..", traits: ["ServerSDK"]),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
    ],
    targets: [
        .executableTarget(
            name: "Shop",
            dependencies: [
                .product(name: "VaneConfiguration", package: "vane"),
                .product(name: "VaneService", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
