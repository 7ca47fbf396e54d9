// swift-tools-version: 6.1

// The package apps add: the engine, the SDK, its test doubles and the typed-flags generator.
// It depends on swift-crypto (the SDK's event queue hashes identities) and swift-log only, so an app
// that adds Vane resolves nothing else (swift-docc-plugin builds this package's documentation and
// is used by no target). VaneCore depends on neither: it is also compiled into the build plugin's
// tool, where swift-crypto cost every package using the plugin two extra host builds of
// BoringSSL's C sources; percent bucketing hashes with VaneCore's own SHA-256. The server and the
// `vane` tool are a second package in
// `Server/` that depends on this one by path: `swift run --package-path Server vane serve`.

import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // `swift package generate-documentation` (scripts/check-docs). No target uses it, so SwiftPM
        // leaves it out of an app's resolution: scripts/check-sdk-dependencies proves it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "VaneCore",
            swiftSettings: strictSettings
        ),
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
        // The DocC articles' snippets, compiled and run.
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["Vane", "VaneCore", "VaneTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
