import ArgumentParser
import Foundation
import VaneCore

/// `vane experiments`: create, list, show, start and stop an environment's A/B tests, read their
/// results and export their raw events.
struct ExperimentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "experiments",
        abstract: "Create, start and stop experiments (A/B tests) of an environment; read their results.",
        discussion: "See docs/EXPERIMENTS.md for the definition file and how results are read.",
        subcommands: [
            ExperimentsCreateCommand.self, ExperimentsListCommand.self, ExperimentsShowCommand.self,
            ExperimentsStartCommand.self, ExperimentsStopCommand.self, ExperimentsResultsCommand.self,
            ExperimentsExportCommand.self,
        ]
    )

    /// One line per experiment: key, status, variants, primary metric, started.
    static func rows(_ experiments: [JSONValue]) -> [[String]] {
        experiments.map { experiment in
            let object = experiment.objectValue ?? JSONObject()
            let variants = (object["variants"]?.arrayValue ?? []).map { variant -> String in
                let variant = variant.objectValue ?? JSONObject()
                let weight = variant["weight"]?.numberValue?.description ?? "?"
                return "\(variant["name"]?.stringValue ?? "?") \(weight)"
            }
            return [
                object["key"]?.stringValue ?? "?",
                object["status"]?.stringValue ?? "?",
                variants.joined(separator: " / "),
                object["primaryMetric"]?.objectValue?["name"]?.stringValue ?? "?",
                object["startTime"]?.stringValue ?? "-",
            ]
        }
    }

    static let header = ["KEY", "STATUS", "VARIANTS", "PRIMARY METRIC", "STARTED"]
}

/// `vane experiments create FILE`.
struct ExperimentsCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an experiment from a JSON definition (a draft until started).",
        discussion: """
            The file holds key, hypothesis, parameters, variants (name, condition, weight), primaryMetric and \
            guardrailMetrics (event, kind: conversion, mean or ratio), method (sequential or bayesian), and \
            optionally confidenceLevel (0.8-0.999, default 0.95) and sampleRatioThreshold (1e-6-0.05, default \
            0.001); - reads standard input. The parameters and conditions must be in the live template.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The definition file (JSON), or - for standard input.")
    var file: String

    func run() async throws {
        let definition = try InputFiles.json(file)
        let reply = try await remote.call { client in
            try await client.createExperiment(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                definition: Data(definition.serialized(.compact).utf8)
            )
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let key = definition.objectValue?["key"]?.stringValue ?? "?"
        print("Created experiment \(key) in \(remote.scope) as a draft; start it with: vane experiments start \(key)")
    }
}

/// `vane experiments list`.
struct ExperimentsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the environment's experiments, newest first."
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: .long, help: "Only experiments with this status: draft, running or stopped.")
    var status: String?

    func validate() throws {
        if let status, !["draft", "running", "stopped"].contains(status) {
            throw ValidationError("--status must be draft, running or stopped, not \"\(status)\"")
        }
    }

    func run() async throws {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.listExperiments(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                status: status
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json { return RemoteOutput.printJSON(reply) }
        let experiments = json.objectValue?["experiments"]?.arrayValue ?? []
        if experiments.isEmpty {
            print("No experiments in \(remote.scope)\(status.map { " with status \($0)" } ?? "").")
            return
        }
        print(RemoteOutput.table(ExperimentsCommand.header, ExperimentsCommand.rows(experiments)))
    }
}

/// `vane experiments show KEY`.
struct ExperimentsShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one experiment's definition and status (as JSON)."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The experiment's key.")
    var key: String

    func run() async throws {
        let reply = try await remote.call { client in
            try await client.experiment(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                key: key
            )
        }
        RemoteOutput.printJSON(reply)
    }
}

/// `vane experiments start KEY`.
struct ExperimentsStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a draft experiment: from now on its exposures and events count."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The experiment's key.")
    var key: String

    func run() async throws {
        guard let json = try await ExperimentsCommand.change(key, "start", remote) else { return }
        let version = json.objectValue?["startVersion"]?.stringValue ?? "?"
        print("Started experiment \(key) in \(remote.scope) on template version \(version).")
    }
}

/// `vane experiments stop KEY`.
struct ExperimentsStopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop a running experiment: nothing more counts, its results stay."
    )

    @OptionGroup var remote: RemoteOptions

    @Argument(help: "The experiment's key.")
    var key: String

    func run() async throws {
        guard try await ExperimentsCommand.change(key, "stop", remote) != nil else { return }
        print("Stopped experiment \(key) in \(remote.scope).")
    }
}

extension ExperimentsCommand {
    /// Starts or stops an experiment. With `--json` prints the reply and returns nil; else returns
    /// the experiment for the command's summary.
    static func change(_ key: String, _ action: String, _ remote: RemoteOptions) async throws -> JSONValue? {
        let (reply, json) = try await remote.call { client in
            let reply = try await client.experiment(
                project: remote.resolvedProject,
                environment: remote.resolvedEnvironment,
                key: key,
                action: action
            )
            return (reply, try reply.json(from: client.server))
        }
        if remote.json {
            RemoteOutput.printJSON(reply)
            return nil
        }
        return json
    }
}
