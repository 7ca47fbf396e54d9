import Foundation
import TestSupport
import Testing
import VaneCore

/// Issue #30's proof that exactly one node decides each step: two real `vane serve` processes on
/// one PostgreSQL database run a rollout with no hold time while the test SIGKILLs and restarts
/// them, and the stored decisions and template versions must show every step decided once, none
/// skipped, and every automatic publish made once.
///
/// Each step, both nodes get exposures for both arms at once, so both guards wake and race for
/// the same step; a node is killed a random few milliseconds later (often inside its decision's
/// transaction) and started again, when its guard's first pass races the other node once more.
/// `VANE_ROLLOUT_NODES_STEPS` (default 6) sets the steps; `scripts/rollout-two-nodes` runs a
/// long one.
@Suite(.serialized, .timeLimit(.minutes(30))) struct RolloutTwoNodeTests {
    static let adminKey = CrashTests.adminKey
    static let environmentPath = CrashTests.environmentPath
    static let rolloutId = "two-nodes"

    /// The steps: `count` of them up to 100 %, whole percents.
    static func steps(_ count: Int) -> [Int] {
        (1...count).map { $0 * 100 / count }
    }

    @Test(.enabled(if: TestEngines.postgreSQLIsOn, Comment(rawValue: TestEngines.sqliteOnlyReason)))
    func exactlyOneNodeDecidesEachStepAcrossSIGKILLs() async throws {
        let count = ProcessInfo.processInfo.environment["VANE_ROLLOUT_NODES_STEPS"].flatMap { Int($0) } ?? 6
        try #require((2...100).contains(count), "VANE_ROLLOUT_NODES_STEPS must be 2-100")
        let steps = Self.steps(count)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-rollout-nodes-\(UUID().uuidString)"
        )
        let database = try await CrashTests.freshPostgresURL()
        let logs = directory.appendingPathComponent("logs")
        // Each node its own data directory (its secret file); the database is the one they share.
        func arguments(_ node: Int) -> [String] {
            [
                "--data-dir", directory.appendingPathComponent("node-\(node)").path, "--database", database,
                "--admin-key", Self.adminKey, "--no-demo", "--address-rate-limit", "0",
            ]
        }
        var nodes = [
            try await CrashServeProcess.start(arguments: arguments(0), outputDirectory: logs),
            try await CrashServeProcess.start(arguments: arguments(1), outputDirectory: logs),
        ]
        defer { for node in nodes { node.kill() } }
        try await Self.setUp(nodes[0], steps: steps)

        var random = SystemRandomNumberGenerator()
        var kills = 0
        var decided = -1
        let deadline = Date().addingTimeInterval(Double(count) * 60)
        while Date() < deadline {
            let rollout = try await Self.rollout(nodes[0])
            if rollout["state"] == "completed" { break }
            try #require(rollout["state"] == "running", "\(rollout)")
            let step = try #require(Self.step(rollout))
            let experiment = try #require(rollout["stepExperiment"]?.stringValue)
            if step == decided {
                // Nobody moved it on (both killed before deciding): wake the guards again.
                try await Task.sleep(for: .milliseconds(200))
            }
            decided = step

            // Both nodes at once: both guards wake and race for this step.
            let attempt = UUID().uuidString.prefix(8)
            let (nodeA, nodeB) = (nodes[0], nodes[1])
            async let first: Void = Self.sendArms(nodeA, experiment: experiment, tag: "\(attempt)-a")
            async let second: Void = Self.sendArms(nodeB, experiment: experiment, tag: "\(attempt)-b")
            _ = try await (first, second)

            // Kill one node, or both, a few milliseconds later, and start them again.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...40, using: &random)))
            let victims: [Int] =
                switch Int.random(in: 0..<4, using: &random) {
                case 0: [0]
                case 1: [1]
                case 2: [0, 1]
                default: []
                }
            for index in victims { nodes[index].kill() }
            kills += victims.count
            for index in victims {
                nodes[index] = try await CrashServeProcess.start(arguments: arguments(index), outputDirectory: logs)
            }
            try await Self.waitForStep(after: step, on: nodes[0], seconds: 20)
        }

        let rollout = try await Self.rollout(nodes[1])
        #expect(rollout["state"] == "completed", "not completed in time: \(rollout)")
        try await Self.verify(rollout, steps: steps, node: nodes[1])
        // Every process's log, killed ones' too: how often a node's decision lost the race.
        let files = (try? FileManager.default.contentsOfDirectory(at: logs, includingPropertiesForKeys: nil)) ?? []
        let races = files.filter { $0.pathExtension == "log" }.reduce(0) { sum, file in
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            return sum + text.components(separatedBy: "a rollout decision did not apply").count - 1
        }
        print("RolloutTwoNodeTests: \(count) steps, \(kills) SIGKILLs, \(races) decisions undone (in the nodes' logs)")
        for node in nodes { node.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A project, an environment, a template and a started rollout with no hold time and one
    /// unit per arm, whose guardrail never fires (no crash is sent).
    static func setUp(_ node: CrashServeProcess, steps: [Int]) async throws {
        let project = try await node.send("POST", "/v1/projects", key: adminKey, json: ["id": "crash"])
        try #require(project.status == 201, "\(project.text)")
        let environment = try await node.send(
            "POST",
            "/v1/projects/crash/environments",
            key: adminKey,
            json: ["id": "prod"]
        )
        try #require(environment.status == 201, "\(environment.text)")
        let template = try await node.send(
            "PUT",
            environmentPath + "/template",
            key: adminKey,
            json: ["parameters": ["image_cache": ["defaultValue": ["value": "v1"], "valueType": "STRING"]]],
            headers: ["If-Match": "*"]
        )
        try #require(template.status == 200, "\(template.text)")
        let plan: JSONValue = [
            "id": .string(rolloutId),
            "parameters": [["key": "image_cache", "value": "v2"]],
            "steps": .array(steps.map { .number(JSONNumber($0)) }),
            "minimumHoldSeconds": 0,
            "minimumUnitsPerArm": 1,
            "guardrails": [["event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0.5]],
        ]
        let created = try await node.send("POST", environmentPath + "/rollouts", key: adminKey, json: plan)
        try #require(created.status == 201, "\(created.text)")
        let started = try await node.send("POST", environmentPath + "/rollouts/\(rolloutId)/start", key: adminKey)
        try #require(started.status == 200, "\(started.text)")
    }

    static func rollout(_ node: CrashServeProcess) async throws -> JSONObject {
        let reply = try await node.send("GET", environmentPath + "/rollouts/\(rolloutId)", key: adminKey)
        try #require(reply.status == 200, "\(reply.text)")
        return try #require(reply.json?.objectValue)
    }

    /// The current step, 1-based as the API gives it.
    static func step(_ rollout: JSONObject) -> Int? {
        rollout["step"]?.numberValue.map { Int($0.value) }
    }

    /// One exposed unit per arm of `experiment`, sent to `node`. A node that has not yet caught
    /// up with the step's publish refuses them as not running: sent again shortly.
    static func sendArms(_ node: CrashServeProcess, experiment: String, tag: String) async throws {
        let now = ISO8601Timestamp.string(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let events: [JSONValue] = ["treatment", "comparison"].map { arm in
            [
                "id": .string("x-\(experiment)-\(tag)-\(arm)"), "type": "exposure", "unit": .string("\(tag)-\(arm)"),
                "time": .string(now), "experiment": .string(experiment), "variant": .string(arm),
            ]
        }
        for _ in 0..<50 {
            let reply = try await node.send(
                "POST",
                environmentPath + "/events",
                key: adminKey,
                json: ["events": .array(events)]
            )
            try #require(reply.status == 200, "\(reply.text)")
            if reply.json?.objectValue?["rejected"]?.arrayValue?.isEmpty == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits until the rollout is past `step` (or not running), reading through `node`.
    static func waitForStep(after step: Int, on node: CrashServeProcess, seconds: Double) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let rollout = try await rollout(node)
            if rollout["state"] != "running" || Self.step(rollout) != step { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The decisions: a start, then one advance per step and the completion, in order (holds
    /// for missing exposures, at most one a step, may come between); the versions: the template,
    /// then exactly one publish per step, in order.
    static func verify(_ rollout: JSONObject, steps: [Int], node: CrashServeProcess) async throws {
        let decisions = (rollout["decisions"]?.arrayValue ?? []).compactMap(\.objectValue)
        let moves = decisions.filter { $0["action"] != "hold" }
        let expectedActions = ["start"] + Array(repeating: "advance", count: steps.count - 2) + ["complete"]
        #expect(moves.compactMap { $0["action"]?.stringValue } == expectedActions, "\(decisions)")
        #expect(
            moves.compactMap { $0["step"]?.numberValue.map { Int($0.value) } } == Array(1...steps.count),
            "each step decided once, none skipped: \(decisions)"
        )
        let holds = decisions.filter { $0["action"] == "hold" }.compactMap { $0["step"]?.numberValue?.value }
        #expect(Set(holds).count == holds.count, "a hold repeated at one step: \(decisions)")
        #expect(decisions.allSatisfy { ["start", "advance", "complete", "hold"].contains($0["action"]) })

        let list = try await node.send("GET", environmentPath + "/versions?pageSize=300", key: adminKey)
        try #require(list.status == 200, "\(list.text)")
        let versions = (list.json?.objectValue?["versions"]?.arrayValue ?? []).compactMap(\.objectValue)
            .sorted {
                Int($0["versionNumber"]?.stringValue ?? "") ?? 0 < Int($1["versionNumber"]?.stringValue ?? "") ?? 0
            }
        let numbers = versions.compactMap { $0["versionNumber"]?.stringValue.flatMap { Int($0) } }
        #expect(numbers == Array(1...(steps.count + 1)), "the template and one publish per step: \(numbers)")
        let descriptions = versions.dropFirst().map { $0["description"]?.stringValue ?? "" }
        let expected = steps.enumerated().map { index, percent in
            "rollout \(rolloutId): step \(index + 1) of \(steps.count), \(percent) %"
        }
        #expect(descriptions == expected, "every automatic publish once, in order: \(descriptions)")
    }
}
