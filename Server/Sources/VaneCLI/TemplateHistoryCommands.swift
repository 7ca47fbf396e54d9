import ArgumentParser
import Foundation
import VaneCore

/// `vane get`: the current template, or an old version.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the published template (or an old version) of an environment."
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "An old version's number (default: the current version).")
    var version: Int64?

    @Option(name: .long, help: "Write the template to this file instead of standard output.")
    var output: String?

    func validate() throws {
        if let version, version < 1 { throw ValidationError("--version must be 1 or more") }
    }

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.template(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                version: version
            )
        }
        let text =
            (try? JSONValue.parse(Array(reply.body)))?.serialized(.pretty)
            ?? String(decoding: reply.body, as: UTF8.self)
        try RemoteOutput.write(text, to: output)
        if let output, !remote.json {
            let number = (try? ConfigTemplate(data: Array(reply.body)))?.version?.number ?? 0
            let what = number == 0 ? "the empty template (nothing published yet)" : "version \(number)"
            print("Wrote \(what) of \(remote.scope) to \(output).")
        }
    }
}

/// `vane versions`: the version history, newest first.
struct VersionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "List an environment's template versions, newest first."
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "How many versions to list (1 to 300; default 20).")
    var limit = 20

    func validate() throws {
        guard (1...300).contains(limit) else { throw ValidationError("--limit must be from 1 to 300") }
    }

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.versions(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                pageSize: limit
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let versions = json.objectValue?["versions"]?.arrayValue ?? []
        if versions.isEmpty {
            print("No versions of \(remote.scope) yet; publish one with vane publish FILE.")
            return
        }
        let rows = versions.map { version -> [String] in
            let object = version.objectValue ?? JSONObject()
            let user = object["updateUser"]?.objectValue
            var type = object["updateType"]?.stringValue ?? ""
            if let source = object["rollbackSource"]?.stringValue { type += " (from \(source))" }
            return [
                object["versionNumber"]?.stringValue ?? "?",
                object["updateTime"]?.stringValue ?? "",
                type,
                user?["name"]?.stringValue ?? user?["email"]?.stringValue ?? "",
                object["description"]?.stringValue ?? "",
            ]
        }
        print(RemoteOutput.table(["VERSION", "TIME", "TYPE", "USER", "DESCRIPTION"], rows))
    }
}

/// `vane rollback`: publish a copy of an old version, or of one flag as it was.
struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Publish a copy of an old version (or of one flag as it was) as the new current version.",
        discussion: """
            With --flag, only that flag is restored as VERSION had it (its values and the conditions they \
            need); everything else stays as it is live. --reason is kept in the version's description and the \
            audit log.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The version to roll back to.")
    var version: Int64

    @Option(help: "Restore only this flag, as the version had it.")
    var flag: String?

    @Option(help: "Why: kept in the version's description and the audit log.")
    var reason: String?

    func validate() throws {
        if version < 1 { throw ValidationError("the version must be 1 or more") }
    }

    func run() async throws {
        let (reply, template) = try await remote.call { client in
            let reply = try await client.rollback(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                to: version,
                flag: flag,
                reason: reason
            )
            return (reply, try RemoteOutput.template(reply, server: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let number = template.version?.versionNumber ?? "?"
        if let flag {
            print("Restored \(flag) in \(remote.scope) as version \(version) had it: published as version \(number).")
        } else {
            print("Rolled back \(remote.scope) to version \(version): published it again as version \(number).")
        }
    }
}

/// `vane diff`: what changed between two versions.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Show the parameters and conditions added, removed and changed between two versions.",
        discussion: "Version 0 is the empty template."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The older version.")
    var from: Int64

    @Argument(help: "The newer version.")
    var to: Int64

    func validate() throws {
        if from < 0 || to < 0 { throw ValidationError("version numbers must not be negative") }
    }

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.diff(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                from: from,
                to: to
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print(Self.render(json, from: from, to: to))
    }

    /// `+ added`, `- removed`, `~ changed`, under Parameters and Conditions.
    static func render(_ json: JSONValue, from: Int64, to: Int64) -> String {
        var lines: [String] = []
        for (section, title) in [("parameters", "Parameters"), ("conditions", "Conditions")] {
            let object = json.objectValue?[section]?.objectValue
            var entries: [String] = []
            for (kind, mark) in [("added", "+"), ("removed", "-"), ("changed", "~")] {
                for name in object?[kind]?.arrayValue ?? [] {
                    entries.append("  \(mark) \(name.stringValue ?? "?")")
                }
            }
            if !entries.isEmpty { lines += ["\(title):"] + entries }
        }
        if lines.isEmpty { return "No differences between version \(from) and version \(to)." }
        return (["Changes from version \(from) to version \(to) (+ added, - removed, ~ changed):"] + lines)
            .joined(separator: "\n")
    }
}
