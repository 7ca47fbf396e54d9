// swift-tools-version: 6.1

import PackageDescription

let package = Package(
    name: "Vane",
    platforms: [
        .macOS(.v14),
        .iOS(.v15),
    ],
    products: [
        .library(name: "VaneCore", targets: ["VaneCore"]),
        .library(name: "Vane", targets: ["Vane"]),
        .library(name: "VaneTesting", targets: ["VaneTesting"]),
        .library(name: "VaneServer", targets: ["VaneServer"]),
        .executable(name: "vane", targets: ["vane"]),
        .executable(name: "vane-generate", targets: ["vane-generate"]),
        .plugin(name: "VaneFlagsPlugin", targets: ["VaneFlagsPlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        .target(
            name: "VaneCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        .target(
            name: "Vane",
            dependencies: [
                "VaneCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "VaneTesting",
            dependencies: ["Vane", "VaneCore", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .target(
            name: "VaneCodegen",
            dependencies: ["VaneCore"]
        ),
        .executableTarget(
            name: "vane-generate",
            dependencies: ["VaneCodegen"]
        ),
        .plugin(
            name: "VaneFlagsPlugin",
            capability: .buildTool(),
            dependencies: ["vane-generate"]
        ),
        .target(
            name: "VaneServer",
            dependencies: [
                "VaneCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
            ]
        ),
        .executableTarget(
            name: "vane",
            dependencies: [
                "VaneCore",
                "Vane",
                "VaneCodegen",
                "VaneServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "vane-example-app",
            dependencies: ["Vane"],
            path: "Examples/FlagsApp",
            plugins: [.plugin(name: "VaneFlagsPlugin")]
        ),
        .executableTarget(
            name: "vane-cache-writer",
            dependencies: ["Vane", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            path: "Tests/CacheWriter"
        ),
        .executableTarget(
            name: "vane-benchmarks",
            dependencies: ["VaneCore", "Vane"],
            path: "Benchmarks/VaneBenchmarks"
        ),
        .executableTarget(
            name: "vane-stream-benchmark",
            dependencies: [
                "Vane",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/StreamBenchmark"
        ),
        .executableTarget(
            name: "vane-http-baseline",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Benchmarks/HTTPBaseline"
        ),
        .testTarget(
            name: "VaneCoreTests",
            dependencies: ["VaneCore"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "VaneServerTests",
            dependencies: [
                "VaneServer",
                "VaneCore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .testTarget(
            name: "VaneCodegenTests",
            dependencies: ["VaneCodegen", "VaneCore"]
        ),
        .testTarget(
            name: "GeneratedFlagsTests",
            dependencies: ["Vane", "VaneTesting"],
            plugins: [.plugin(name: "VaneFlagsPlugin")]
        ),
        .testTarget(
            name: "vaneTests",
            dependencies: [
                "vane",
                "VaneCore",
                "Vane",
                "VaneTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
