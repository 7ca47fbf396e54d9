// swift-tools-version: 6.1

// Vane for server-side Swift: the local evaluation client as a swift-service-lifecycle service
// (VaneService) and a swift-configuration provider backed by it (VaneConfiguration).
// A package of its own so that only services that add it resolve swift-configuration,
// swift-service-lifecycle, swift-metrics and async-http-client; apps that add the SDK at the
// repository's root do not.
//
//     .package(url: "https://github.com/…/vane.git", from: "0.1.0")   // the SDK
//     .product(name: "VaneConfiguration", package: "vane-server-sdk")  // this package, by path or URL

import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "vane-server-sdk",
    platforms: [
        // swift-configuration's availability (Configuration 1.0); Linux is unaffected.
        .macOS(.v15),
        .iOS(.v18),
        .tvOS(.v18),
        .watchOS(.v11),
        .visionOS(.v2),
    ],
    products: [
        .library(name: "VaneService", targets: ["VaneService"]),
        .library(name: "VaneConfiguration", targets: ["VaneConfiguration"]),
    ],
    dependencies: [
        .package(name: "vane", path: ".."),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "VaneService",
            dependencies: [
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCore", package: "vane"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "VaneConfiguration",
            dependencies: [
                "VaneService",
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strictSettings
        ),
        // Unit tests of the service and the provider over a scripted transport: no server needed.
        // The tests that need a real `vane serve` live in Server/Tests/ServerSDKTests.
        .testTarget(
            name: "VaneServerSDKTests",
            dependencies: [
                "VaneConfiguration",
                "VaneService",
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
