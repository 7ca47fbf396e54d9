import ArgumentParser
import Foundation
import VaneCore

/// `vane users`: the people who sign in to the console.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Create, list and change console accounts (needs an admin key).",
        subcommands: [UsersCreateCommand.self, UsersListCommand.self, UsersUpdateCommand.self, UsersResetCommand.self]
    )
}

/// What a person may do in the console.
enum UserRoleArgument: String, ExpressibleByArgument, CaseIterable {
    case viewer
    case editor
    case admin
}

/// `vane users create`.
struct UsersCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an account and print its one-time password, once.",
        discussion: """
            viewers read everything; editors also change flags in the environments --environments \
            grants (project/environment, project/* or *, comma-separated); admins also manage keys and people.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "What they sign in with.")
    var email: String

    @Option(name: .long, help: "viewer, editor or admin.")
    var role: UserRoleArgument

    @Option(name: .customLong("name"), help: "How the console greets them (default: the email).")
    var displayName: String?

    @Option(name: .long, help: "For an editor: project/environment, project/* or *, comma-separated.")
    var environments: String?

    func run() async throws {
        let grants = (environments ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        let (reply, json) = try await remote.call { client in
            let reply = try await client.createUser(
                email: email,
                name: displayName,
                role: role.rawValue,
                environments: grants
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let object = json.objectValue ?? JSONObject()
        print(
            "Created \(role.rawValue) account \(object["email"]?.stringValue ?? email) (id \(object["id"]?.stringValue ?? "?"))."
        )
        print(object["oneTimePassword"]?.stringValue ?? "")
        StandardError.write(
            "warning: this one-time password is shown only now; give it to them privately. They choose their own at the first sign-in."
        )
    }
}

/// `vane users list`.
struct UsersListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List console accounts (never passwords)."
    )

    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.listUsers()
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let rows = (json.objectValue?["users"]?.arrayValue ?? []).map { user -> [String] in
            let object = user.objectValue ?? JSONObject()
            let grants = (object["environments"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
            return [
                object["id"]?.stringValue ?? "?",
                object["email"]?.stringValue ?? "",
                object["role"]?.stringValue ?? "",
                grants.isEmpty ? "-" : grants,
                object["disableTime"] != nil ? "disabled" : "active",
            ]
        }
        print(RemoteOutput.table(["ID", "EMAIL", "ROLE", "ENVIRONMENTS", "STATUS"], rows))
    }
}

/// `vane users update`.
struct UsersUpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change an account's role or environments, or disable or enable it."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The account's id (from vane users list).")
    var id: String

    @Option(name: .long, help: "viewer, editor or admin.")
    var role: UserRoleArgument?

    @Option(name: .long, help: "For an editor: project/environment, project/* or *, comma-separated.")
    var environments: String?

    @Flag(inversion: .prefixedEnableDisable, help: "Disable the account (its sessions end) or enable it again.")
    var account: Bool?

    func validate() throws {
        if role == nil, environments == nil, account == nil {
            throw ValidationError("say what to change: --role, --environments, --disable-account or --enable-account")
        }
    }

    func run() async throws {
        var changes = JSONObject()
        if let role { changes["role"] = .string(role.rawValue) }
        if let environments {
            changes["environments"] = .array(
                environments.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) }
            )
        }
        if let account { changes["disabled"] = .bool(!account) }
        let (reply, _) = try await remote.call { client in
            let reply = try await client.updateUser(id: id, changes: changes)
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print("Updated account \(id).")
    }
}

/// `vane users reset-password`.
struct UsersResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Give an account a new one-time password; its sessions end."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The account's id (from vane users list).")
    var id: String

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.resetUserPassword(id: id)
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print(json.objectValue?["oneTimePassword"]?.stringValue ?? "")
        StandardError.write("warning: this one-time password is shown only now.")
    }
}
