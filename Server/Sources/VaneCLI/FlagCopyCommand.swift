import ArgumentParser
import Foundation
import VaneCore

/// `vane flags copy`: a flag copied from the environment of `--environment` into another, as the
/// console's **Copy** does it (`POST …/flags/{key}/copy`); prints what changes and for how many
/// sampled users, and with `--publish` publishes it there.
struct FlagCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a flag (its values and the conditions they use) to another environment.",
        discussion: """
            Shows what the copy changes in the target's live version and how many sampled users get \
            another value; publishes nothing unless --publish is given (then only if the target's \
            version is still the one shown). Needs reading the source and publishing in the target.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The flag's key.")
    var flag: String

    @Option(name: .long, help: "The environment to copy into (same project).")
    var to: String

    @Option(name: [.short, .long], help: "The description of the version --publish publishes.")
    var message: String?

    @Flag(name: .long, help: "Publish the copy in the target environment.")
    var publish = false

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.copyFlag(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                flag: flag,
                to: to
            )
        }
        guard case .object(var object)? = try? JSONValue.parse(Array(reply.body)) else {
            throw InputError("the server's answer is not a JSON object")
        }
        guard publish else {
            if remote.json { return RemoteOutput.printJSON(reply) }
            return print(Self.describe(object, flag: flag, target: to))
        }
        guard case .object(var template)? = object["template"], let etag = reply.etag else {
            throw InputError("the server's answer has no template to publish")
        }
        template["version"] = ["description": .string(message ?? "Copied \(flag) from \(remote.resolvedEnvironment)")]
        let published = try await remote.call { client in
            try await client.publish(
                project: remote.resolvedProject,
                environment: to,
                template: Data(JSONValue.object(template).serialized(.compact).utf8),
                ifMatch: etag
            )
        }
        if remote.json { return RemoteOutput.printJSON(published) }
        object["template"] = nil
        let version =
            (try? JSONValue.parse(Array(published.body)))?.objectValue?["version"]?.objectValue?[
                "versionNumber"
            ]?.stringValue ?? "?"
        print(Self.describe(object, flag: flag, target: to) + "\nPublished version \(version) of \(to).")
    }

    /// What the copy changes, and for how many sampled users.
    static func describe(_ object: JSONObject, flag: String, target: String) -> String {
        let replaced = object["replaced"]?.boolValue == true
        var lines = ["\(flag) → \(target): \(replaced ? "replaces the flag there" : "a new flag there")."]
        let added = (object["addedConditions"]?.arrayValue ?? []).compactMap(\.stringValue)
        if !added.isEmpty { lines.append("Conditions added (lowest priority): \(added.joined(separator: ", ")).") }
        let keys = (object["impact"]?.objectValue?["keys"]?.arrayValue ?? []).compactMap(\.objectValue)
        let rows = keys.map { key in
            [
                key["key"]?.stringValue ?? "?",
                "\(key["changed"]?.numberValue?.intValue ?? 0) of \(key["of"]?.numberValue?.intValue ?? 0)",
            ]
        }
        lines.append(
            rows.isEmpty
                ? "No sampled user's value changes."
                : RemoteOutput.table(["KEY", "SAMPLED USERS WHOSE VALUE CHANGES"], rows)
        )
        return lines.joined(separator: "\n")
    }
}
