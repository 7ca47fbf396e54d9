// swift-tools-version: 6.1

// The Vane server and the `vane` command-line tool, with their tests, examples and benchmarks.
// A package of its own so that apps adding the SDK (the package at the repository root) never
// resolve Hummingbird, swift-nio, the database drivers or swift-argument-parser.
//
//     swift run --package-path Server vane serve

import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// The server also imports internally by default: a module it uses shows in its interface only
// where a public declaration needs it (`public import`).
let serverSettings = strictSettings + [.enableUpcomingFeature("InternalImportsByDefault")]

let package = Package(
    name: "VaneServer",
    platforms: [
        // Hummingbird 2 needs macOS 14, and the server SDK (its tests and example live here)
        // swift-configuration's macOS 15; the SDK package itself supports macOS 12.
        .macOS(.v15)
    ],
    products: [
        .library(name: "VaneServer", targets: ["VaneServer"]),
        .executable(name: "vane", targets: ["VaneCLI"]),
    ],
    dependencies: [
        // With the server SDK (VaneService, VaneConfiguration) for its tests, example and benchmark.
        .package(name: "vane", path: "..", traits: ["ServerSDK"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // NIOHTTPTypes: event streams write their events to the connection (StreamSubscriber).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // One trait, not Hummingbird's two defaults: SwiftPM orders several traits' -D flags
        // differently from one build plan to the next, and every reordering recompiled Hummingbird
        // and all that imports it. Nothing here uses its ConfigurationSupport (ConfigReader inits).
        .package(
            url: "https://github.com/hummingbird-project/hummingbird.git",
            from: "2.28.1",
            traits: ["FullFoundation"]
        ),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        // ID tokens of the console's single sign-on (VaneOIDC): JWKS, signatures.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The server is three targets, so the compiler keeps its layers apart (docs/ARCHITECTURE.md,
        // "The server's targets"): the core (storage, auth, serving, experiments, what the HTTP
        // layers share), the console (the only user of Mustache and the assets plugin), and the
        // product: HTTP routes, OFREP, the demo and the wiring. Siblings share `package` access.
        .target(
            name: "VaneServerCore",
            dependencies: [
                "ExperimentStatistics",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                // Webhook deliveries (Serving/Webhooks).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: serverSettings
        ),
        // OpenID Connect sign-in for the console: discovery, the authorization-code flow with
        // PKCE, ID-token verification (jwt-kit starts here), accounts from the provider's claims.
        .target(
            name: "VaneOIDC",
            dependencies: [
                "VaneServerCore",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: serverSettings
        ),
        .target(
            name: "VaneConsole",
            dependencies: [
                "VaneServerCore",
                "VaneOIDC",
                "ExperimentStatistics",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            // The console's templates, styles and scripts: compiled into the binary by the
            // ConsoleAssets plugin, so `vane` stays one file that works air-gapped.
            exclude: ["Assets"],
            swiftSettings: serverSettings,
            plugins: ["ConsoleAssets"]
        ),
        .target(
            name: "VaneServer",
            dependencies: [
                "VaneServerCore",
                "VaneConsole",
                "VaneOIDC",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // VaneHTTP1Channel: HTTP/1 parts to and from swift-http-types, as Hummingbird's channel.
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: serverSettings
        ),
        .executableTarget(
            name: "vane-embed-assets",
            path: "Plugins/EmbedAssetsTool"
        ),
        .plugin(
            name: "ConsoleAssets",
            capability: .buildTool(),
            dependencies: ["vane-embed-assets"],
            path: "Plugins/ConsoleAssets"
        ),
        .executableTarget(
            name: "VaneCLI",
            dependencies: [
                "VaneServer",
                "VaneServerCore",
                // `vane serve`'s single sign-on settings are VaneOIDC's SingleSignOnSettings.
                "VaneOIDC",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCodegen", package: "vane"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `vane serve` bootstraps swift-metrics with a Prometheus registry; the library never does.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: serverSettings
        ),
        .executableTarget(
            name: "vane-example-app",
            dependencies: [.product(name: "Vane", package: "vane")],
            path: "Examples/FlagsApp",
            plugins: [.plugin(name: "VaneFlagsPlugin", package: "vane")]
        ),
        .executableTarget(
            name: "vane-config-example",
            dependencies: [
                .product(name: "VaneConfiguration", package: "vane"),
                .product(name: "VaneService", package: "vane"),
                .product(name: "Vane", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Examples/ConfigService"
        ),
        // The timing harness the benchmark executables share.
        .target(
            name: "BenchmarkHarness",
            path: "Benchmarks/Harness"
        ),
        .executableTarget(
            name: "vane-config-benchmark",
            dependencies: [
                "BenchmarkHarness",
                .product(name: "VaneConfiguration", package: "vane"),
                .product(name: "VaneService", package: "vane"),
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Benchmarks/ConfigBenchmark"
        ),
        .executableTarget(
            name: "vane-benchmarks",
            dependencies: [
                "BenchmarkHarness",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "Vane", package: "vane"),
                // The baseline for VaneCore's own SHA-256.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/VaneBenchmarks"
        ),
        .executableTarget(
            name: "vane-stream-benchmark",
            dependencies: [
                .product(name: "Vane", package: "vane"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/StreamBenchmark"
        ),
        // SQLite alone running vane's ingest transaction (sqlite-floor.c): the database half of
        // vane-http-baseline's POST /events-stored; ingest-benchmark.sh also builds the file with
        // clang as a program and runs it alone. Its SQLite is SQLiteNIO's, linked with VaneServerCore.
        .target(
            name: "SQLiteFloor",
            path: "Benchmarks/SQLiteFloor",
            cSettings: [.define("SQLITE_FLOOR_LIBRARY")]
        ),
        .executableTarget(
            name: "vane-http-baseline",
            dependencies: [
                "VaneServerCore",
                "SQLiteFloor",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Benchmarks/HTTPBaseline"
        ),
        // The experiment statistics engine: pure functions of per-variant aggregates (no I/O, no
        // dependencies), so the server, the CLI and the console can share it (docs/EXPERIMENTS.md).
        .target(
            name: "ExperimentStatistics",
            swiftSettings: serverSettings
        ),
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "VaneServerTests",
            dependencies: [
                "TestSupport",
                "VaneServer",
                "VaneServerCore",
                "VaneConsole",
                "VaneOIDC",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The single sign-on tests sign ID tokens with keys they make.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"),
                // The test process bootstraps metrics as an embedding app would (TestServer.swift).
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "ExperimentStatisticsTests",
            dependencies: ["ExperimentStatistics", "TestSupport"],
            // reference.json (read through #filePath) and the script that wrote it from scipy and
            // statsmodels.
            exclude: ["Fixtures"],
            swiftSettings: serverSettings
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "VaneCLI",
                "VaneServer",
                "TestSupport",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "VaneAuthoring", package: "vane"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // A self-signed certificate for 127.0.0.1 and its key, for the HTTPS tests only.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "SDKIntegrationTests",
            dependencies: [
                "VaneCLI",
                "vane-example-app",
                "TestSupport",
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneTesting", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "VaneService", package: "vane"),
            ]
        ),
        .testTarget(
            name: "ServerSDKTests",
            dependencies: [
                "VaneCLI",
                "vane-config-example",
                "TestSupport",
                .product(name: "VaneConfiguration", package: "vane"),
                .product(name: "VaneService", package: "vane"),
                .product(name: "Vane", package: "vane"),
                .product(name: "VaneCore", package: "vane"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
