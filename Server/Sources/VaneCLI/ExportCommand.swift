import ArgumentParser
import Foundation
import VaneAuthoring
import VaneCore

/// `vane export`: the published template, as Vane keeps it or for Firebase.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the published template, or with --firebase a template Firebase Remote Config accepts.",
        discussion: """
            --firebase drops Vane's metadata, rewrites conditions in Firebase's syntax, and leaves out \
            conditions Firebase cannot express (||, !, …) with their conditional values. Each one left out \
            is listed on standard error; the exit status is still 0.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Flag(name: .long, help: "Convert for Firebase Remote Config.")
    var firebase = false

    @Option(name: .long, help: "Write the template to this file instead of standard output.")
    var output: String?

    func run() async throws {
        let (reply, template) = try await remote.call { client in
            let reply = try await client.template(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment
            )
            return (reply, try RemoteOutput.template(reply, server: client.server))
        }
        guard firebase else {
            let text =
                (try? JSONValue.parse(Array(reply.body)))?.serialized(.pretty)
                ?? String(decoding: reply.body, as: UTF8.self)
            try RemoteOutput.write(text, to: output)
            if let output { print("Wrote version \(template.version?.number ?? 0) of \(remote.scope) to \(output).") }
            return
        }
        let exported = FirebaseExport.export(template)
        try RemoteOutput.write(exported.template.serialized(.pretty), to: output)
        if let output {
            print("Wrote version \(template.version?.number ?? 0) of \(remote.scope) to \(output) for Firebase.")
        }
        if !exported.omissions.isEmpty {
            let count = exported.omissions.count
            var lines = [
                "warning: the Firebase export is incomplete: \(count) condition\(count == 1 ? "" : "s") left out, "
                    + "with \(count == 1 ? "its" : "their") conditional values (Firebase cannot express them):"
            ]
            for omission in exported.omissions { lines.append("  \(omission.path): \(omission.message)") }
            lines.append(
                "Rewrite them without || or ! (for example, one condition per alternative) to export them too."
            )
            StandardError.write(lines.joined(separator: "\n"))
        }
    }
}
