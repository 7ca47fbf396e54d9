// swift-tools-version: 6.1

// The package apps add: the engine, the SDK, its test doubles and the typed-flags generator.
// It depends on swift-crypto (the SDK's event queue hashes identities) and swift-log only, so an app
// that adds Vane resolves nothing else (swift-docc-plugin builds this package's documentation and
// is used by no target). VaneCore depends on neither: it is also compiled into the build plugin's
// tool, where swift-crypto cost every package using the plugin two extra host builds of
// BoringSSL's C sources; percent bucketing hashes with VaneCore's own SHA-256. The server and the
// `vane` tool are a second package in
// `Server/` that depends on this one by path: `swift run --package-path Server vane serve`.
//
// The server SDK (VaneService, VaneConfiguration) is here too, behind the `ServerSDK` trait (off
// by default): a service enables it to get them and their dependencies (swift-configuration,
// swift-service-lifecycle, swift-metrics, async-http-client); an app that does not, resolves none
// of those. Without the trait their modules compile empty (`#if ServerSDK`), so `swift build` here
// needs no flag; `--traits ServerSDK` builds and tests them.

import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The server SDK's API needs swift-configuration's platforms (macOS 15, iOS 18, …) while the package
// keeps the SDK's (macOS 12, iOS 15, …): its declarations say `@available(VaneServerSDK, *)`.
let serverSDKAvailability: SwiftSetting = .enableExperimentalFeature(
    "AvailabilityMacro=VaneServerSDK:macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0"
)

// The condition on the server SDK's dependencies: an app that adds Vane without the `ServerSDK`
// trait never resolves the packages they come from.
let serverSDKOnly: TargetDependencyCondition? = .when(traits: ["ServerSDK"])

let package = Package(
    name: "Vane",
    platforms: [
        .macOS(.v12),
        .iOS(.v15),
        .tvOS(.v15),
        .watchOS(.v8),
        .visionOS(.v1),
    ],
    products: [
        .library(name: "VaneCore", targets: ["VaneCore"]),
        .library(name: "VaneAuthoring", targets: ["VaneAuthoring"]),
        .library(name: "Vane", targets: ["Vane"]),
        .library(name: "VaneTesting", targets: ["VaneTesting"]),
        .library(name: "VaneCodegen", targets: ["VaneCodegen"]),
        .executable(name: "vane-generate", targets: ["vane-generate"]),
        .plugin(name: "VaneFlagsPlugin", targets: ["VaneFlagsPlugin"]),
        .library(name: "VaneService", targets: ["VaneService"]),
        .library(name: "VaneConfiguration", targets: ["VaneConfiguration"]),
    ],
    traits: [
        .trait(
            name: "ServerSDK",
            description: "The server SDK: VaneService and VaneConfiguration, with their dependencies"
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // `swift package generate-documentation` (scripts/check-docs). No target uses it, so SwiftPM
        // leaves it out of an app's resolution: scripts/check-sdk-dependencies proves it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // The server SDK's, used only under the `ServerSDK` trait.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "VaneCore",
            dependencies: ["CVaneSHA256"],
            swiftSettings: strictSettings
        ),
        // SHA-256's compression on the CPU's instructions (SHA-NI, ARMv8 SHA2) for VaneCore's
        // percent buckets: Swift has no intrinsics. Internal to VaneCore, not a product.
        .target(name: "CVaneSHA256"),
        // Writing templates: merge, diff, validation, encoding, Firebase export. The server, the
        // `vane` tool and codegen use it; the SDK does not, so an app never sees it.
        .target(
            name: "VaneAuthoring",
            dependencies: ["VaneCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Vane",
            dependencies: [
                "VaneCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Apple's privacy manifest: what the SDK collects and which required-reason APIs it
            // calls (docs/SDK.md, "Platforms"). Xcode merges it into the app's privacy report.
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "VaneTesting",
            dependencies: ["Vane", "VaneCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "VaneCodegen",
            dependencies: ["VaneCore"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "vane-generate",
            dependencies: ["VaneCodegen"],
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "VaneFlagsPlugin",
            capability: .buildTool(),
            dependencies: ["vane-generate"]
        ),
        // The server SDK. Its dependencies exist only with the `ServerSDK` trait; its sources are
        // inside `#if ServerSDK`.
        .target(
            name: "VaneService",
            dependencies: [
                "Vane",
                "VaneCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: serverSDKOnly),
                .product(name: "Metrics", package: "swift-metrics", condition: serverSDKOnly),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: serverSDKOnly),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: serverSDKOnly),
                .product(name: "NIOCore", package: "swift-nio", condition: serverSDKOnly),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: serverSDKOnly),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: serverSDKOnly),
            ],
            swiftSettings: strictSettings + [serverSDKAvailability]
        ),
        .target(
            name: "VaneConfiguration",
            dependencies: [
                "VaneService",
                "Vane",
                "VaneCore",
                .product(name: "Configuration", package: "swift-configuration", condition: serverSDKOnly),
            ],
            swiftSettings: strictSettings + [serverSDKAvailability]
        ),
        .executableTarget(
            name: "vane-cache-writer",
            dependencies: ["Vane"],
            path: "Tests/CacheWriter"
        ),
        .testTarget(
            name: "VaneCoreTests",
            dependencies: ["VaneCore", "VaneAuthoring", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "VaneCodegenTests",
            dependencies: ["VaneCodegen", "VaneCore"]
        ),
        .testTarget(
            name: "SDKTests",
            dependencies: ["Vane", "VaneCore", "vane-cache-writer"]
        ),
        .testTarget(
            name: "GeneratedFlagsTests",
            dependencies: ["Vane", "VaneTesting"],
            plugins: [.plugin(name: "VaneFlagsPlugin")]
        ),
        // The DocC articles' snippets, compiled and run (the server SDK's with the trait), and
        // the check that every public function documents its parameters, result and errors.
        .testTarget(
            name: "DocumentationTests",
            dependencies: [
                "Vane", "VaneCore", "VaneTesting", "VaneService", "VaneConfiguration",
                .product(name: "Configuration", package: "swift-configuration", condition: serverSDKOnly),
            ]
        ),
        // The server SDK's unit tests over a scripted transport (no server): `swift test --traits
        // ServerSDK`. Those that need a real `vane serve` live in Server/Tests/ServerSDKTests.
        .testTarget(
            name: "VaneServerSDKTests",
            dependencies: [
                "VaneConfiguration",
                "VaneService",
                "Vane",
                "VaneCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration", condition: serverSDKOnly),
                .product(name: "ConfigurationTesting", package: "swift-configuration", condition: serverSDKOnly),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: serverSDKOnly),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: serverSDKOnly),
            ],
            swiftSettings: [serverSDKAvailability]
        ),
    ],
    swiftLanguageModes: [.v6]
)
