import ArgumentParser
import Foundation
import VaneCore

/// `vane explain`: who gets what on the server, as the console's "Who gets what" page shows it
/// (`POST …/evaluate`).
struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Ask the server what one context gets from the live template, key by key, and why.",
        discussion: """
            The context file is a JSON object as `vane eval` reads it ("randomizationId" and attributes such \
            as "device.country"); - reads standard input. Prints each key's value, where it came from and \
            the deciding condition; --compare adds another environment's value beside it. Needs an admin \
            key or the environment's server key. `vane eval --explain` does the same with a template file.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "The context: a JSON object.")
    var context: String

    @Option(name: .long, help: "Another environment of the project to compare with.")
    var compare: String?

    func run() async throws {
        let contextJSON = try InputFiles.json(context)
        guard contextJSON.objectValue != nil else {
            throw InputError("\(InputFiles.displayName(context)): the context must be a JSON object")
        }
        let reply = try await remote.call { client in
            try await client.evaluate(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                context: contextJSON,
                compareEnvironment: compare
            )
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        guard let object = try? JSONValue.parse(Array(reply.body)).objectValue else {
            throw InputError("the server's answer is not a JSON object")
        }
        print(Self.describe(object, scope: remote.scope))
    }

    /// A table of the keys: value, source (with the reason), deciding condition, and the other side.
    static func describe(_ object: JSONObject, scope: String) -> String {
        let version = object["versionNumber"]?.stringValue ?? "?"
        let other = object["compareEnvironment"]?.stringValue
        func value(_ row: JSONObject?) -> String {
            guard let row else { return "" }
            guard let text = row["value"]?.stringValue else { return "(no value)" }
            return text.count > 60 ? String(text.prefix(60)) + "…" : text
        }
        func why(_ row: JSONObject) -> String {
            let reason = row["reason"]?.stringValue ?? "?"
            return row["condition"]?.stringValue.map { "\(reason) (\($0))" } ?? reason
        }
        var header = ["KEY", "VALUE", "WHY"]
        if let other { header += [other.uppercased(), "DIFFERS"] }
        let rows = (object["keys"]?.arrayValue ?? []).compactMap(\.objectValue).map { row in
            var cells = [row["key"]?.stringValue ?? "?", value(row), why(row)]
            if other != nil {
                cells += [value(row["compare"]?.objectValue), row["differs"]?.boolValue == true ? "yes" : ""]
            }
            return cells
        }
        var headline = "Version \(version) of \(scope)"
        if let other, let otherVersion = object["compareVersionNumber"]?.stringValue {
            headline += ", beside version \(otherVersion) of \(other)"
        }
        return headline + ":\n" + RemoteOutput.table(header, rows)
    }
}
