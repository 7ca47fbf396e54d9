import ArgumentParser
import Foundation
import VaneCodegen
import VaneCore

/// `vane flags`: commands about an app's flags file.
struct FlagsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flags",
        abstract:
            "Check an app's flags file against its code and the server; switch a flag off or on; copy one to another environment.",
        subcommands: [FlagsCheckCommand.self, FlagSwitchCommand.self, FlagCopyCommand.self]
    )
}

/// `vane flags check`: stale flags, undefined reads, and differences from the server.
struct FlagsCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "List stale flags, reads of undefined flags, and flags missing or typed differently on the server.",
        discussion: """
            Exits 1 when it finds anything, so CI can run it. With --server, the key comes from --key or \
            VANE_KEY (a server or admin key) and the environment from --project/--environment or \
            VANE_PROJECT/VANE_ENVIRONMENT.
            """
    )

    @Option(name: .long, help: "The flags file (vane-flags.json, a list of {name, value}, or a template).")
    var flags: String

    @Option(name: .long, help: "A directory of Swift sources to search (repeatable).")
    var sources: [String]

    @Option(name: .long, help: "Compare with this template file.")
    var template: String?

    /// `--server` (compare with the current template there), `--key`, `--project`, `--environment`:
    /// the same options, variables and defaults as every remote command.
    @OptionGroup var remote: RemoteConnectionOptions

    func validate() throws {
        if template != nil, remote.server != nil { throw ValidationError("give --template or --server, not both") }
        if sources.isEmpty { throw ValidationError("give at least one --sources directory") }
    }

    func run() async throws {
        let flagsFile: FlagsFile
        do {
            flagsFile = try FlagsFile(data: try InputFiles.read(flags))
        } catch let error as DocumentError {
            throw InputError(file: flags, issues: error.issues)
        }
        var swiftSources: [(path: String, text: String)] = []
        for directory in sources { swiftSources += try Self.swiftFiles(in: directory) }
        let report = FlagsCheck.check(flags: flagsFile, sources: swiftSources, template: try await serverTemplate())
        print(Self.describe(report, flagsName: flags, compared: template != nil || remote.server != nil))
        if report.hasProblems { throw ExitCode(InputError.exitCode) }
    }

    /// The template to compare with, from --template or --server.
    func serverTemplate() async throws -> ConfigTemplate? {
        if let template { return try InputFiles.template(template) }
        // Only an explicit --server asks for the comparison: VANE_SERVER alone is often set for
        // other commands, and flags check works offline.
        guard remote.server != nil else { return nil }
        try remote.check()
        let reply = try await remote.call { client in
            try await client.template(project: remote.resolvedProject, environment: remote.resolvedEnvironment)
        }
        do {
            return try ConfigTemplate(data: Array(reply.body))
        } catch {
            throw InputError("the server's template cannot be read: \(error)")
        }
    }

    /// Every `.swift` file below a directory, skipping build folders.
    static func swiftFiles(in directory: String) throws -> [(path: String, text: String)] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw InputError("\(directory): not a directory; --sources takes the folder of your Swift sources")
        }
        let root = URL(fileURLWithPath: directory)
        var files: [(path: String, text: String)] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            let name = url.lastPathComponent
            if name == ".build" || name.hasPrefix(".build-") || name == ".git" {
                enumerator?.skipDescendants()
                continue
            }
            guard url.pathExtension == "swift", let text = try? String(contentsOf: url, encoding: .utf8) else {
                continue
            }
            let relative =
                url.path.hasPrefix(root.path + "/") ? String(url.path.dropFirst(root.path.count + 1)) : url.path
            files.append(((directory as NSString).appendingPathComponent(relative), text))
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The report as text, one finding per line.
    static func describe(_ report: FlagsCheckReport, flagsName: String, compared: Bool) -> String {
        var lines: [String] = []
        for key in report.stale {
            lines.append("stale: \"\(key)\" is defined in \(flagsName) but never referenced in the sources")
        }
        for reference in report.undefined {
            lines.append(
                "undefined: \(reference.location): reads \"\(reference.key)\", which \(flagsName) does not define"
            )
        }
        for key in report.missingOnServer {
            lines.append("missing on the server: \"\(key)\" is defined in \(flagsName) but not in the template")
        }
        for difference in report.typeDifferences {
            lines.append(
                "type differs: \"\(difference.key)\" is \(difference.localType) in \(flagsName), "
                    + "\(difference.serverType) on the server"
            )
        }
        if lines.isEmpty {
            lines.append(
                compared
                    ? "OK: every flag is referenced, defined and on the server"
                    : "OK: every flag is referenced and defined"
            )
        }
        return lines.joined(separator: "\n")
    }
}
