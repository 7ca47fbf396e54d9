import Foundation
import PackagePlugin

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
/// experiment, all `internal`. Edit the flags file and build: nothing else to run.
@main
struct VaneFlagsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let flagsFiles = target.sourceFiles.filter { $0.url.lastPathComponent == "vane-flags.json" }
        guard let input = flagsFiles.first?.url else { return [] }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("VaneFlags.swift")
        return [
            .buildCommand(
                displayName: "Generating typed flags from \(input.lastPathComponent)",
                executable: try context.tool(named: "vane-generate").url,
                arguments: ["--input", input.path, "--output", output.path],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}
