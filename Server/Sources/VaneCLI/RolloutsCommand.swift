import ArgumentParser
import Foundation
import VaneCore

/// `vane rollouts`: create, start, pause, resume and stop an environment's progressive rollouts,
/// and show where one stands (docs/ROLLOUTS.md).
struct RolloutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollouts",
        abstract: "Create and steer progressive rollouts guarded by metrics.",
        discussion: "See docs/ROLLOUTS.md for the plan file and what the guard decides.",
        subcommands: [
            RolloutsCreateCommand.self, RolloutActionCommand<RolloutStart>.self,
            RolloutActionCommand<RolloutPause>.self, RolloutActionCommand<RolloutResume>.self,
            RolloutActionCommand<RolloutStop>.self, RolloutsStatusCommand.self,
        ]
    )

    /// `…/rollouts` of the command's environment, with `suffix`.
    static func path(_ remote: RemoteOptions, _ suffix: String = "") -> String {
        EnvironmentAddress(project: remote.resolvedProject, environment: remote.resolvedEnvironment).path()
            + "/rollouts" + suffix
    }

    /// `/{id}` with the id percent-encoded, then `action`.
    static func item(_ id: String, _ action: String = "") -> String {
        "/" + EnvironmentAddress.pathSegment(id) + action
    }

    /// One line about a rollout: id, state, step and share.
    static func summary(_ rollout: JSONObject) -> String {
        let steps = rollout["steps"]?.arrayValue?.count ?? 0
        let step = rollout["step"]?.numberValue.map {
            "step \($0) of \(steps) (\(rollout["percent"]?.numberValue?.description ?? "?") %)"
        }
        return "rollout \(rollout["id"]?.stringValue ?? "?") is \(rollout["state"]?.stringValue ?? "?")"
            + (step.map { ", \($0)" } ?? "")
    }
}

/// `vane rollouts create FILE`.
struct RolloutsCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a rollout from a JSON plan (a draft until started).",
        discussion: """
            The file holds id, parameters ([{"key", "value"}]), optionally audience (a condition's name), steps \
            (default 1 5 10 25 50 100), minimumHoldSeconds (3600), minimumUnitsPerArm (500), guardrails (event, \
            kind: conversion or mean, bad: increase or decrease, margin), onRegression (roll_back or hold) and \
            errorRate (0.05); - reads standard input.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The plan file (JSON), or - for standard input.")
    var file: String

    func run() async throws {
        let plan = try InputFiles.json(file)
        guard let created = try await RolloutsCommand.send(remote, "POST", RolloutsCommand.path(remote), body: plan)
        else { return }
        let id = created["id"]?.stringValue ?? "?"
        print("Created rollout \(id) in \(remote.scope) as a draft; start it with: vane rollouts start \(id)")
    }
}

/// What `vane rollouts start|pause|resume|stop ID` each do: the same call with another action.
protocol RolloutAction {
    /// The subcommand's name, which is also the API's action (`POST …/rollouts/{id}/{name}`).
    static var name: String { get }
    static var abstract: String { get }
}

enum RolloutStart: RolloutAction {
    static let name = "start"
    static let abstract = "Start a draft rollout: publishes its first step; the guard advances it from then on."
}

enum RolloutPause: RolloutAction {
    static let name = "pause"
    static let abstract = "Pause a running rollout: its current step stays published, the guard decides nothing."
}

enum RolloutResume: RolloutAction {
    static let name = "resume"
    static let abstract = "Resume a paused rollout: the guard decides again."
}

enum RolloutStop: RolloutAction {
    static let name = "stop"
    static let abstract =
        "Stop a rollout where it stands: the current share keeps the new value, the guard stops watching."
}

/// `vane rollouts start|pause|resume|stop ID`.
struct RolloutActionCommand<Action: RolloutAction>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Action.name, abstract: Action.abstract)
    }

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The rollout's id.")
    var id: String

    func run() async throws { try await RolloutsCommand.act(remote, id, Action.name) }
}

/// `vane rollouts status [ID]`.
struct RolloutsStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Where a rollout stands and every decision made, or every rollout of the environment."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The rollout's id; none lists every rollout.")
    var id: String?

    func run() async throws {
        guard let id else {
            guard let listed = try await RolloutsCommand.send(remote, "GET", RolloutsCommand.path(remote)) else {
                return
            }
            let rollouts = (listed["rollouts"]?.arrayValue ?? []).compactMap(\.objectValue)
            if rollouts.isEmpty { print("No rollouts in \(remote.scope).") }
            for rollout in rollouts { print(RolloutsCommand.summary(rollout)) }
            return
        }
        guard
            let rollout = try await RolloutsCommand.send(
                remote,
                "GET",
                RolloutsCommand.path(remote, RolloutsCommand.item(id))
            )
        else { return }
        print(RolloutsCommand.summary(rollout))
        for decision in (rollout["decisions"]?.arrayValue ?? []).compactMap(\.objectValue) {
            print(
                "  \(decision["time"]?.stringValue ?? "?")  step \(decision["step"]?.numberValue?.description ?? "?")  "
                    + "\(decision["action"]?.stringValue ?? "?")  \(decision["reason"]?.stringValue ?? "")"
            )
        }
    }
}

extension RolloutsCommand {
    /// Sends a request; with `--json` prints the reply and returns nil.
    static func send(
        _ remote: RemoteOptions,
        _ method: String,
        _ path: String,
        body: JSONValue? = nil
    ) async throws -> JSONObject? {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.send(method, path, body: body.map { Data($0.serialized(.compact).utf8) })
            return (reply, try reply.json(from: client.server))
        }
        if remote.json {
            RemoteOutput.printJSON(reply)
            return nil
        }
        return json.objectValue ?? JSONObject()
    }

    /// Starts, pauses, resumes or stops a rollout and says where it stands.
    static func act(_ remote: RemoteOptions, _ id: String, _ action: String) async throws {
        guard let rollout = try await send(remote, "POST", path(remote, item(id, "/" + action))) else { return }
        print(summary(rollout) + " (\(remote.scope)).")
    }
}
