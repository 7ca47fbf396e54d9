import ArgumentParser
import Foundation
import VaneCore

/// `vane keys`: create, list and revoke API keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke API keys (needs an admin key).",
        subcommands: [KeysCreateCommand.self, KeysListCommand.self, KeysRevokeCommand.self]
    )
}

/// What a key may do.
enum KeyRoleArgument: String, ExpressibleByArgument, CaseIterable {
    case admin
    case server
    case client
}

/// `vane keys create`.
struct KeysCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an API key and print its secret, once.",
        discussion: """
            admin keys work on every project; server keys (read full templates, for server-side SDKs) and \
            client keys (fetch evaluated values) belong to the environment --project and --environment name.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "admin, server or client.")
    var role: KeyRoleArgument

    @Option(name: .long, help: "What the key is for (\"ios-app\"); shown in lists and the audit log.")
    var name: String

    func validate() throws {
        if name.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--name must not be empty") }
    }

    func run() async throws {
        let scoped = role != .admin
        let (reply, json) = try await remote.call { client in
            let reply = try await client.createKey(
                name: name,
                role: role.rawValue,
                project: scoped ? remote.resolvedProject : nil,
                environment: scoped ? remote.resolvedEnvironment : nil
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let object = json.objectValue ?? JSONObject()
        let id = object["id"]?.stringValue ?? "?"
        let scope = scoped ? "for \(remote.scope)" : "for every project"
        print("Created \(role.rawValue) key \"\(name)\" (id \(id)) \(scope).")
        print(object["key"]?.stringValue ?? "")
        StandardError.write(
            "warning: this is the only time the key is shown; store it in a secret manager now. Lost keys cannot be recovered: revoke it (vane keys revoke \(id)) and create another."
        )
    }
}

/// `vane keys list`.
struct KeysListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List API keys (ids, names, roles and scopes; never secrets)."
    )

    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.listKeys()
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let rows = (json.objectValue?["keys"]?.arrayValue ?? []).map { key -> [String] in
            let object = key.objectValue ?? JSONObject()
            let project = object["project"]?.stringValue
            let environment = object["environment"]?.stringValue
            let scope = project.map { "\($0)/\(environment ?? "*")" } ?? "all projects"
            return [
                object["id"]?.stringValue ?? "?",
                object["role"]?.stringValue ?? "",
                scope,
                object["createTime"]?.stringValue ?? "",
                object["revokeTime"].map { "revoked \($0.stringValue ?? "")" } ?? "active",
                object["name"]?.stringValue ?? "",
            ]
        }
        print(RemoteOutput.table(["ID", "ROLE", "SCOPE", "CREATED", "STATUS", "NAME"], rows))
    }
}

/// `vane keys revoke`.
struct KeysRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke an API key: it stops working at once."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The key's id (from vane keys list), not its secret.")
    var id: String

    func run() async throws {
        _ = try await remote.call { client in try await client.revokeKey(id: id) }
        if remote.json {
            RemoteOutput.printJSON(["id": .string(id), "revoked": .bool(true)])
            return
        }
        print("Revoked key \(id).")
    }
}
