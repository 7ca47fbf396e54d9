import Foundation
import PackagePlugin

#if canImport(XcodeProjectPlugin)
import XcodeProjectPlugin
#endif

/// Generates a target's typed flags API from its `vane-flags.json` at build time.
///
/// Add the plugin to a target that contains `vane-flags.json`:
///
/// ```swift
/// .target(
///     name: "App",
///     dependencies: [.product(name: "Vane", package: "vane")],
///     plugins: [.plugin(name: "VaneFlagsPlugin", package: "vane")]
/// )
/// ```
///
/// The generated `VaneFlags.swift` declares `Flags`, `FlagsKey`, the `RemoteKeys` and an enum per
/// experiment, all `internal`. Edit the flags file and build: nothing else to run. The same
/// plugin serves app targets of an Xcode project (`XcodeBuildToolPlugin`).
@main
struct VaneFlagsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        return Self.commands(
            inputs: target.sourceFiles.map(\.url),
            workDirectory: context.pluginWorkDirectoryURL,
            generator: try context.tool(named: "vane-generate").url
        )
    }

    /// The command that turns the target's `vane-flags.json`, if it has one, into `VaneFlags.swift`.
    static func commands(inputs: [URL], workDirectory: URL, generator: URL) -> [Command] {
        guard let input = inputs.first(where: { $0.lastPathComponent == "vane-flags.json" }) else { return [] }
        let output = workDirectory.appendingPathComponent("VaneFlags.swift")
        return [
            .buildCommand(
                displayName: "Generating typed flags from \(input.lastPathComponent)",
                executable: generator,
                arguments: ["--input", input.path, "--output", output.path],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

// Xcode runs the same plugin for app targets of an .xcodeproj: add it under the target's Build
// Phases › Run Build Tool Plug-ins, with vane-flags.json a member of the target.
// https://developer.apple.com/documentation/xcode/writing-a-build-tool-plugin
#if canImport(XcodeProjectPlugin)
extension VaneFlagsPlugin: XcodeBuildToolPlugin {
    func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
        Self.commands(
            inputs: target.inputFiles.map(\.url),
            workDirectory: context.pluginWorkDirectoryURL,
            generator: try context.tool(named: "vane-generate").url
        )
    }
}
#endif
