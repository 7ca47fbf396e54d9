import ArgumentParser
import Foundation
import VaneCore

/// `vane webhooks`: a project's webhook endpoints and their deliveries (docs/WEBHOOKS.md).
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract:
            "Create, list, rotate and delete a project's webhook endpoints; see their deliveries (needs an admin key).",
        subcommands: [
            WebhooksCreateCommand.self, WebhooksListCommand.self, WebhooksDeliveriesCommand.self,
            WebhooksRotateSecretCommand.self, WebhooksRedeliverCommand.self, WebhooksDeleteCommand.self,
        ]
    )

    /// `/v1/projects/{project}/webhooks`, and below it.
    static func path(_ remote: RemoteOptions, _ rest: String = "") -> String {
        "/v1/projects/\(EnvironmentAddress.pathSegment(remote.resolvedProject))/webhooks" + rest
    }

    /// Prints a new secret once, with the warning that it is not shown again.
    static func printSecret(of object: JSONObject) {
        print(object["secret"]?.stringValue ?? "")
        StandardError.write(
            "warning: this is the only time the secret is shown; put it in the receiver's configuration now. A lost secret cannot be recovered: rotate it (vane webhooks rotate-secret)."
        )
    }
}

/// `vane webhooks create`.
struct WebhooksCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a webhook endpoint for --project and print its secret, once."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The endpoint's http:// or https:// URL.")
    var url: String

    @Option(name: .customLong("event"), help: "An event type it receives (repeatable; default: every type).")
    var events: [String] = []

    @Option(name: .long, help: "What the endpoint is for.")
    var description: String?

    func run() async throws {
        var body: JSONObject = ["url": .string(url)]
        if !events.isEmpty { body["events"] = .array(events.map { .string($0) }) }
        if let description { body["description"] = .string(description) }
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send(
                "POST",
                WebhooksCommand.path(remote),
                body: Data(JSONValue.object(body).serialized(.compact).utf8)
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let object = json.objectValue ?? JSONObject()
        print("Created webhook endpoint \(object["id"]?.stringValue ?? "?") for \(remote.resolvedProject): \(url)")
        WebhooksCommand.printSecret(of: object)
    }
}

/// `vane webhooks list`.
struct WebhooksListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List --project's webhook endpoints (never their secrets)."
    )

    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send("GET", WebhooksCommand.path(remote))
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let rows = (json.objectValue?["webhooks"]?.arrayValue ?? []).map { endpoint -> [String] in
            let object = endpoint.objectValue ?? JSONObject()
            return [
                object["id"]?.stringValue ?? "?",
                object["enabled"]?.boolValue == true ? "enabled" : "disabled",
                (object["events"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ","),
                object["url"]?.stringValue ?? "",
            ]
        }
        print(RemoteOutput.table(["ID", "STATUS", "EVENTS", "URL"], rows))
    }
}

/// `vane webhooks deliveries`.
struct WebhooksDeliveriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries",
        abstract: "List an endpoint's newest deliveries with their last attempts."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The endpoint's id (from vane webhooks list).")
    var id: String

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send(
                "GET",
                WebhooksCommand.path(remote, "/\(EnvironmentAddress.pathSegment(id))/deliveries")
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let rows = (json.objectValue?["deliveries"]?.arrayValue ?? []).map { delivery -> [String] in
            let object = delivery.objectValue ?? JSONObject()
            let last = object["lastAttempt"]?.objectValue
            let outcome =
                last.map { attempt in
                    attempt["error"]?.stringValue ?? attempt["statusCode"]?.numberValue.map { "HTTP \($0)" } ?? ""
                } ?? "not tried yet"
            return [
                object["message"]?.stringValue ?? "?",
                object["type"]?.stringValue ?? "",
                "\(object["environment"]?.stringValue ?? "")@\(object["version"]?.numberValue.map { "\($0)" } ?? "?")",
                object["status"]?.stringValue ?? "",
                object["attempts"]?.numberValue.map { "\($0)" } ?? "0",
                outcome,
            ]
        }
        print(RemoteOutput.table(["MESSAGE", "TYPE", "VERSION", "STATUS", "ATTEMPTS", "LAST ATTEMPT"], rows))
    }
}

/// `vane webhooks rotate-secret`.
struct WebhooksRotateSecretCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-secret",
        abstract: "Give an endpoint a new secret and print it, once; the old one keeps signing for --grace-hours."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The endpoint's id.")
    var id: String

    @Option(name: .long, help: "Hours the old secret keeps signing beside the new one (0 to 168, default 24).")
    var graceHours: Int = 24

    func run() async throws {
        let body: JSONValue = ["graceHours": .number(JSONNumber(graceHours))]
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send(
                "POST",
                WebhooksCommand.path(remote, "/\(EnvironmentAddress.pathSegment(id))/rotate-secret"),
                body: Data(body.serialized(.compact).utf8)
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print("Rotated the secret of webhook endpoint \(id); the old one signs for \(graceHours) more hours.")
        WebhooksCommand.printSecret(of: json.objectValue ?? JSONObject())
    }
}

/// `vane webhooks redeliver`.
struct WebhooksRedeliverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redeliver",
        abstract: "Send a message to an endpoint again, with the same webhook-id."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The endpoint's id.")
    var id: String

    @Argument(help: "The message id (from vane webhooks deliveries).")
    var message: String

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.send(
                "POST",
                WebhooksCommand.path(
                    remote,
                    "/\(EnvironmentAddress.pathSegment(id))/deliveries/\(EnvironmentAddress.pathSegment(message))/redeliver"
                )
            )
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        print("Queued message \(message) for webhook endpoint \(id) again.")
    }
}

/// `vane webhooks delete`.
struct WebhooksDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a webhook endpoint with its deliveries."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The endpoint's id.")
    var id: String

    func run() async throws {
        _ = try await remote.call { client in
            try await client.send("DELETE", WebhooksCommand.path(remote, "/\(EnvironmentAddress.pathSegment(id))"))
        }
        if remote.json {
            RemoteOutput.printJSON(["id": .string(id), "deleted": .bool(true)])
            return
        }
        print("Deleted webhook endpoint \(id).")
    }
}
