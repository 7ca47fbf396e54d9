import Foundation
import PackagePlugin

/// Compiles the console's assets (`Assets` in the VaneConsole target: Mustache templates, CSS,
/// JavaScript) into the target as Swift string literals, so the `vane` binary carries them and
/// needs no resource folder beside it.
@main
struct ConsoleAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let assets = target.directoryURL.appending(path: "Assets")
        let files = Self.files(under: assets)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedConsoleAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) console assets",
                executable: try context.tool(named: "vane-embed-assets").url,
                arguments: [assets.path(), output.path()] + files.map { $0.path() },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }

    /// Every regular file under `directory`, in a stable order.
    static func files(under directory: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            return []
        }
        var files: [URL] = []
        for case let url as URL in enumerator {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path(), isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(url)
            }
        }
        return files.sorted { $0.path() < $1.path() }
    }
}
