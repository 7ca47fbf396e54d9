import ArgumentParser
import Foundation
import VaneCore

/// `vane rebase`: a template edited on an older version brought onto the live one, field by field,
/// by the console's rule (`POST …/template/rebase`). Publishes nothing.
struct RebaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebase",
        abstract: "Merge a template you edited on an older version onto the live version, field by field.",
        discussion: """
            Your changes since --base and those published since merge field by field; only a field both \
            changed differently is a conflict. Without conflicts the merged template is written (to \
            --output or standard output), ready for vane publish, and every choice that reverts a live \
            change is listed. With conflicts they are listed and the exit status is 1: write a choice \
            for each to a JSON file and pass it with --choices, e.g. \
            [{"kind": "parameter", "name": "banner_text", "field": "defaultValue", "take": "mine"}] \
            ("take": "theirs", or "value": … instead of "take"). Needs a key that may read the template.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "The version FILE was written on (0: the empty template).")
    var base: Int64

    @Argument(help: "The template you edited (- for standard input).")
    var file: String

    @Option(name: .long, help: "A JSON file of choices, one per conflicting field.")
    var choices: String?

    @Option(name: .long, help: "Write the merged template to this file instead of standard output.")
    var output: String?

    func validate() throws {
        if base < 0 { throw ValidationError("--base must be 0 or more") }
    }

    func run() async throws {
        let template = try InputFiles.json(file)
        guard template.objectValue != nil else {
            throw InputError("\(InputFiles.displayName(file)): expected a template (a JSON object)")
        }
        let choiceList = try choices.map { path throws(InputError) in try InputFiles.json(path) } ?? .array([])
        let reply = try await remote.call { client in
            try await client.rebase(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                baseVersion: base,
                template: template,
                choices: choiceList
            )
        }
        let answer = try? JSONValue.parse(Array(reply.body)).objectValue
        if remote.json {
            RemoteOutput.printJSON(reply)
        } else if reply.status == 409 {
            print(Self.describeConflicts(answer ?? JSONObject(), scope: remote.scope))
        } else {
            guard let merged = answer?["template"] else {
                throw InputError("the server's answer has no merged template")
            }
            try RemoteOutput.write(merged.serialized(.pretty), to: output)
            let live = answer?["liveVersion"]?.stringValue ?? "?"
            let reverts = (answer?["reverts"]?.arrayValue ?? []).compactMap { $0.objectValue?["message"]?.stringValue }
            // With the template on standard output, the summary goes to standard error.
            let summary =
                (output.map { ["Wrote the template merged onto version \(live) of \(remote.scope) to \($0)."] } ?? [])
                + reverts.map { "warning: \($0)" }
            for line in summary {
                if output == nil { StandardError.write(line) } else { print(line) }
            }
        }
        if reply.status == 409 { throw ExitCode(InputError.exitCode) }
    }

    /// One line per conflicting field, then how to choose.
    static func describeConflicts(_ answer: JSONObject, scope: String) -> String {
        let conflicts = answer["conflicts"]?.arrayValue ?? []
        func text(_ value: JSONValue?) -> String { value?.stringValue ?? "none" }
        var lines = [
            "\(conflicts.count) field(s) changed differently here and in version \(text(answer["liveVersion"])) of \(scope):"
        ]
        for conflict in conflicts {
            let object = conflict.objectValue ?? JSONObject()
            let subject = [object["kind"], object["name"]].compactMap { $0?.stringValue }.joined(separator: " ")
            lines.append(
                "  \(subject) \(text(object["field"])): base \(text(object["base"])), mine \(text(object["mine"])), "
                    + "theirs \(text(object["theirs"]))"
            )
        }
        lines.append(
            "Choose for each with --choices FILE: [{\"kind\", \"name\", \"field\", \"take\": \"mine\" or \"theirs\"}]."
        )
        return lines.joined(separator: "\n")
    }
}
