// swift-tools-version: 6.1

// libFuzzer harnesses for the parsers that read what the network, a disk or a template author
// hands the SDK and the engine. A package of its own, so that neither `swift build` at the root
// nor an app that adds Vane ever sees them. Run them with `scripts/fuzz [SECONDS]`; each target is
// one executable whose `LLVMFuzzerTestOneInput` its main hands to libFuzzer's driver. They need
// `-sanitize=fuzzer` (which links libFuzzer) and `-enable-testing` (two read SDK internals).

import PackageDescription

/// One harness: an executable target `Fuzz<name>` built from `Sources/Fuzz<name>/main.swift`.
func harness(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: "Fuzz\(name)",
        dependencies: ["FuzzSupport"] + dependencies
    )
}

let package = Package(
    name: "VaneFuzz",
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    dependencies: [
        .package(name: "vane", path: "..")
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        harness("JSON", [.product(name: "VaneCore", package: "vane")]),
        harness(
            "Condition",
            [.product(name: "VaneCore", package: "vane"), .product(name: "VaneAuthoring", package: "vane")]
        ),
        harness(
            "StructuredCondition",
            [.product(name: "VaneCore", package: "vane"), .product(name: "VaneAuthoring", package: "vane")]
        ),
        harness("EvaluationContext", [.product(name: "VaneCore", package: "vane")]),
        harness("EventStream", [.product(name: "Vane", package: "vane")]),
        harness("CacheFile", [.product(name: "Vane", package: "vane"), .product(name: "VaneCore", package: "vane")]),
    ],
    swiftLanguageModes: [.v6]
)
