import ArgumentParser
import Foundation
import VaneCore

/// `vane flags switch`: the kill switch of a Boolean flag, as the console's "Turn off"/"Turn on"
/// throws it (`POST …/flags/{key}/switch`).
struct FlagSwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch",
        abstract: "Turn a Boolean flag off for everyone, or back on as it was, and publish that.",
        discussion: """
            off: every value of the flag becomes false. on: the flag comes back as it was before it was \
            switched off (a flag that was never on becomes true for everyone else). Needs a key that may \
            publish the environment. With --dry-run, prints what would change and publishes nothing.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "on or off.")
    var position: String

    @Argument(help: "The flag's key.")
    var flag: String

    @Option(name: [.short, .long], help: "Why: the message goes into the history (required unless --dry-run).")
    var message: String?

    @Flag(name: .long, help: "Print what would change; publish nothing.")
    var dryRun = false

    func validate() throws {
        guard ["on", "off"].contains(position) else {
            throw ValidationError("the switch goes on or off, not \"\(position.prefix(20))\"")
        }
        if !dryRun, (message ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("say why with --message: it goes into the history")
        }
    }

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.switchFlag(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                flag: flag,
                to: position,
                message: message ?? "",
                validateOnly: dryRun
            )
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        guard let object = try? JSONValue.parse(Array(reply.body)).objectValue else {
            throw InputError("the server's answer is not a JSON object")
        }
        print(Self.describe(object, scope: remote.scope, dryRun: dryRun))
    }

    /// The changes as a table, and what was published.
    static func describe(_ object: JSONObject, scope: String, dryRun: Bool) -> String {
        let flag = object["flag"]?.stringValue ?? "?"
        let to = object["to"]?.stringValue ?? "?"
        let version = object["versionNumber"]?.stringValue ?? "?"
        func text(_ value: JSONValue?) -> String {
            guard let value = value?.objectValue else { return "(none)" }
            return ParameterValue(json: value).stringValue ?? value.keys.first.map { "(\($0))" } ?? "(none)"
        }
        let rows = (object["changes"]?.arrayValue ?? []).compactMap(\.objectValue).map { change in
            [
                change["condition"]?.stringValue.map { "if \($0)" } ?? "everyone else", text(change["before"]),
                text(change["after"]),
            ]
        }
        let table = RemoteOutput.table(["VALUE", "BEFORE", "AFTER"], rows)
        let headline: String
        if dryRun {
            headline = "Switching \(flag) \(to) in \(scope) would change version \(version) like this:"
        } else if object["published"]?.boolValue == true {
            headline = "Switched \(flag) \(to) in \(scope): published version \(version)."
        } else {
            headline = "\(flag) is already \(to) in \(scope): nothing changed, version \(version) stays live."
        }
        return headline + "\n" + table
    }
}
