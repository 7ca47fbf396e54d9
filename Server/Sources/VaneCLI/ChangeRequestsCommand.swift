import ArgumentParser
import Foundation
import VaneAuthoring
import VaneCore

/// `vane change-requests`: open, review and apply an environment's change requests
/// (docs/GOVERNANCE.md).
struct ChangeRequestsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-requests",
        abstract: "Open, review and apply change requests of an environment with a change policy.",
        discussion: "See docs/GOVERNANCE.md for the policy, the states and break-glass.",
        subcommands: [
            ChangeRequestsListCommand.self, ChangeRequestsShowCommand.self, ChangeRequestsCreateCommand.self,
            ChangeRequestsApproveCommand.self, ChangeRequestsRejectCommand.self, ChangeRequestsApplyCommand.self,
            ChangeRequestsScheduleCommand.self,
        ]
    )

    /// `…/change-requests` of the command's environment, with `suffix` (`/{id}/approve`).
    static func path(_ remote: RemoteOptions, _ suffix: String = "") -> String {
        EnvironmentAddress(project: remote.resolvedProject, environment: remote.resolvedEnvironment).path()
            + "/change-requests" + suffix
    }

    /// `/{id}` with the id percent-encoded, then `action`.
    static func item(_ id: String, _ action: String = "") -> String {
        "/" + EnvironmentAddress.pathSegment(id) + action
    }

    /// Sends a request; with `--json` prints the reply and returns nil.
    static func send(
        _ remote: RemoteOptions,
        _ method: String,
        _ path: String,
        body: JSONObject? = nil,
        query: [URLQueryItem] = []
    ) async throws -> JSONObject? {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send(
                method,
                path,
                query: query,
                body: body.map { Data(JSONValue.object($0).serialized(.compact).utf8) }
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json {
            RemoteOutput.printJSON(reply)
            return nil
        }
        return json.objectValue ?? JSONObject()
    }

    /// One line about a request: id, state, approvals, title.
    static func summary(_ request: JSONObject) -> String {
        let approvals = request["approvals"]?.numberValue?.description ?? "?"
        let required = request["approvalsRequired"]?.numberValue?.description ?? "?"
        return "\(request["id"]?.stringValue ?? "?") is \(request["state"]?.stringValue ?? "?") "
            + "(\(approvals)/\(required) approvals): \(request["title"]?.stringValue ?? "")"
            + (request["applyTime"]?.stringValue.map { " — applies at \($0)" } ?? "")
            + (request["stateReason"]?.stringValue.map { " — \($0)" } ?? "")
    }
}

/// `vane change-requests list`.
struct ChangeRequestsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List change requests, newest first."
    )

    @OptionGroup var remote: RemoteOptions

    @Option(
        name: .long,
        help: "Only requests in this state (draft, in_review, approved, scheduled, applied, rejected, …)."
    )
    var state: String?

    func run() async throws {
        guard
            let json = try await ChangeRequestsCommand.send(
                remote,
                "GET",
                ChangeRequestsCommand.path(remote),
                query: state.map { [URLQueryItem(name: "state", value: $0)] } ?? []
            )
        else { return }
        let requests = (json["changeRequests"]?.arrayValue ?? []).compactMap(\.objectValue)
        if requests.isEmpty {
            print("No change requests in \(remote.scope)\(state.map { " in state \($0)" } ?? "").")
            return
        }
        let rows = requests.map { request in
            [
                request["id"]?.stringValue ?? "?", request["state"]?.stringValue ?? "?",
                request["change"]?.objectValue?["kind"]?.stringValue ?? "?",
                "\(request["approvals"]?.numberValue?.description ?? "?")/\(request["approvalsRequired"]?.numberValue?.description ?? "?")",
                request["author"]?.stringValue ?? "?", request["applyTime"]?.stringValue ?? "-",
                request["title"]?.stringValue ?? "",
            ]
        }
        print(RemoteOutput.table(["ID", "STATE", "KIND", "APPROVALS", "AUTHOR", "APPLIES AT", "TITLE"], rows))
    }
}

/// `vane change-requests show ID`.
struct ChangeRequestsShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract:
            "Print a change request as JSON: the change, its content hash, reviews, and the preview (diff and users whose values change) of what applying it now would do."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The change request's id.")
    var id: String

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.send("GET", ChangeRequestsCommand.path(remote, ChangeRequestsCommand.item(id)))
        }
        RemoteOutput.printJSON(reply)
    }
}

/// `vane change-requests create`.
struct ChangeRequestsCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract:
            "Open a change request on the live version: a template, a rollback, an experiment start or stop, a policy, or a rollout's start."
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "What the change does, for the reviewers.")
    var title: String

    @Option(name: .long, help: "Why, for the reviewers.")
    var description: String?

    @Option(name: .long, help: "Propose this template file (- for standard input).")
    var template: String?

    @Option(name: .long, help: "Propose a rollback to this version.")
    var rollback: Int64?

    @Option(name: .long, help: "Propose starting this draft experiment.")
    var startExperiment: String?

    @Option(name: .long, help: "Propose stopping this running experiment.")
    var stopExperiment: String?

    @Option(name: .long, help: "Propose this change policy (a JSON file as PUT …/change-policy takes).")
    var policy: String?

    @Option(name: .long, help: "Propose starting this draft rollout (its steps then advance by themselves).")
    var startRollout: String?

    @Flag(name: .long, help: "Keep it a draft: not in review yet.")
    var draft = false

    func validate() throws {
        let given = [
            template != nil, rollback != nil, startExperiment != nil, stopExperiment != nil, policy != nil,
            startRollout != nil,
        ]
        guard given.filter({ $0 }).count == 1 else {
            throw ValidationError(
                "give exactly one of --template, --rollback, --start-experiment, --stop-experiment, --policy, "
                    + "--start-rollout"
            )
        }
    }

    func run() async throws {
        let change: JSONObject
        if let template {
            change = ["kind": "template", "template": try InputFiles.template(template).json()]
        } else if let rollback {
            change = ["kind": "rollback", "versionNumber": .string(String(rollback))]
        } else if let startExperiment {
            change = ["kind": "experiment_start", "experiment": .string(startExperiment)]
        } else if let stopExperiment {
            change = ["kind": "experiment_stop", "experiment": .string(stopExperiment)]
        } else if let startRollout {
            change = ["kind": "rollout_start", "rollout": .string(startRollout)]
        } else {
            change = ["kind": "policy", "policy": try InputFiles.json(policy ?? "-")]
        }
        var body: JSONObject = ["title": .string(title), "change": .object(change), "draft": .bool(draft)]
        if let description { body["description"] = .string(description) }
        guard
            let json = try await ChangeRequestsCommand.send(
                remote,
                "POST",
                ChangeRequestsCommand.path(remote),
                body: body
            )
        else { return }
        print("Opened " + ChangeRequestsCommand.summary(json))
        print("Reviewers: vane change-requests show \(json["id"]?.stringValue ?? "ID"), then approve it with --hash")
    }
}

/// What approving and rejecting share: the request, the revision reviewed, and the call that
/// records the verdict.
struct ChangeRequestVerdict: ParsableArguments {
    /// approve or reject, as the path names it.
    enum Kind: String {
        case approve, reject

        var done: String { self == .approve ? "Approved" : "Rejected" }
    }

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The change request's id.")
    var id: String

    @Option(name: .long, help: "The contentHash you reviewed (vane change-requests show ID).")
    var hash: String

    /// Records the verdict with its comment and prints the request as it now stands.
    func send(_ kind: Kind, comment: String?) async throws {
        var body: JSONObject = ["contentHash": .string(hash)]
        if let comment { body["comment"] = .string(comment) }
        let path = ChangeRequestsCommand.path(remote, ChangeRequestsCommand.item(id, "/" + kind.rawValue))
        guard let json = try await ChangeRequestsCommand.send(remote, "POST", path, body: body) else { return }
        print("\(kind.done): " + ChangeRequestsCommand.summary(json))
    }
}

/// `vane change-requests approve ID --hash H`.
struct ChangeRequestsApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Approve the revision of a change request you reviewed (its contentHash from show)."
    )

    @OptionGroup var verdict: ChangeRequestVerdict

    @Option(name: .long, help: "A comment for the author.")
    var comment: String?

    func run() async throws { try await verdict.send(.approve, comment: comment) }
}

/// `vane change-requests reject ID --hash H --comment C`.
struct ChangeRequestsRejectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject",
        abstract: "Reject the revision of a change request you reviewed; it stays blocked until its author edits it."
    )

    @OptionGroup var verdict: ChangeRequestVerdict

    @Option(name: .long, help: "Why, for the author.")
    var comment: String

    func run() async throws { try await verdict.send(.reject, comment: comment) }
}

/// `vane change-requests apply ID [--break-glass REASON]`.
struct ChangeRequestsApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply an approved change request now (or, if the policy names you, by break-glass)."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The change request's id.")
    var id: String

    @Option(name: .long, help: "Apply without approvals, audited as break-glass, with this reason.")
    var breakGlass: String?

    func run() async throws {
        var body: JSONObject = [:]
        if let breakGlass { body["breakGlass"] = .string(breakGlass) }
        let path = ChangeRequestsCommand.path(remote, ChangeRequestsCommand.item(id, "/apply"))
        guard let json = try await ChangeRequestsCommand.send(remote, "POST", path, body: body) else { return }
        let version = json["appliedVersion"]?.stringValue.map { " (version \($0))" } ?? ""
        print("Applied\(version): " + ChangeRequestsCommand.summary(json))
    }
}

/// `vane change-requests schedule ID --at TIME` (or `--remove`).
struct ChangeRequestsScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Apply an approved change request at a time (once, on one server node), or remove its time.",
        discussion: """
            The time is RFC 3339 with a time zone (2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00), in the \
            future and at most a year ahead. Any edit of the request removes its time and its approvals.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The change request's id.")
    var id: String

    @Option(name: .long, help: "When it applies (RFC 3339, e.g. 2026-12-01T09:00:00Z).")
    var at: String?

    @Flag(name: .long, help: "Remove the time: the request stays approved, to apply by hand or at a new time.")
    var remove = false

    func validate() throws {
        guard (at != nil) != remove else { throw ValidationError("give either --at TIME or --remove") }
    }

    func run() async throws {
        let path = ChangeRequestsCommand.path(remote, ChangeRequestsCommand.item(id, "/schedule"))
        if let at {
            let body: JSONObject = ["applyTime": .string(at)]
            guard let json = try await ChangeRequestsCommand.send(remote, "POST", path, body: body) else { return }
            print("Scheduled: " + ChangeRequestsCommand.summary(json))
        } else {
            guard let json = try await ChangeRequestsCommand.send(remote, "DELETE", path) else { return }
            print("Unscheduled: " + ChangeRequestsCommand.summary(json))
        }
    }
}
