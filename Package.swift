// swift-tools-version: 6.1

import PackageDescription

let package = Package(
    name: "Vane",
    platforms: [
        .macOS(.v12),
        .iOS(.v15),
    ],
    products: [
        .library(name: "VaneCore", targets: ["VaneCore"]),
        .executable(name: "vane", targets: ["vane"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "VaneCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        .executableTarget(
            name: "vane",
            dependencies: [
                "VaneCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "vane-benchmarks",
            dependencies: ["VaneCore"],
            path: "Benchmarks/VaneBenchmarks"
        ),
        .testTarget(
            name: "VaneCoreTests",
            dependencies: ["VaneCore"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "vaneTests",
            dependencies: ["vane", "VaneCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
