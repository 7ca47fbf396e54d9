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
/// `VANE_ROLLOUT_NODES_STEPS` (default 6, at most 20: a plan's limit) sets the steps and
/// `VANE_ROLLOUT_NODES_ROLLOUTS` (default 1) how many rollouts run one after the other;
/// `scripts/rollout-two-nodes` runs a long one.
@Suite(.serialized, .timeLimit(.minutes(30))) struct RolloutTwoNodeTests {
    static let adminKey = CrashTests.adminKey
    static let environmentPath = CrashTests.environmentPath
    static func rolloutId(_ number: Int) -> String { "two-nodes-\(number)" }

    /// The steps: `count` of them up to 100 %, whole percents.
    static func steps(_ count: Int) -> [Int] {
        (1...count).map { $0 * 100 / count }
    }

    @Test(.enabled(if: TestEngines.postgreSQLIsOn, Comment(rawValue: TestEngines.sqliteOnlyReason)))
    func exactlyOneNodeDecidesEachStepAcrossSIGKILLs() async throws {
        let settings = ProcessInfo.processInfo.environment
        let count = settings["VANE_ROLLOUT_NODES_STEPS"].flatMap { Int($0) } ?? 6
        try #require((2...20).contains(count), "VANE_ROLLOUT_NODES_STEPS must be 2-20")
        let rollouts = settings["VANE_ROLLOUT_NODES_ROLLOUTS"].flatMap { Int($0) } ?? 1
        // Every version is read back in one page of at most 300.
        try #require((1...299).contains(rollouts * count), "VANE_ROLLOUT_NODES_ROLLOUTS × STEPS must be below 300")
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
        try await Self.setUp(nodes[0])

        var random = SystemRandomNumberGenerator()
        var kills = 0
        for number in 1...rollouts {
            let id = Self.rolloutId(number)
            try await Self.start(id, steps: steps, through: nodes[0])
            var decided = -1
            let deadline = Date().addingTimeInterval(Double(count) * 60)
            while Date() < deadline {
                let rollout = try await Self.rollout(nodes[0], id)
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

                // Kill one node, or both, a few milliseconds later, and start them again. Both
                // start at once: their guards' first passes race for the step the events are for.
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...40, using: &random)))
                let victims: [Int] =
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0: [0]
                    case 1: [1]
                    case 2, 3: [0, 1]
                    default: []
                    }
                for index in victims { nodes[index].kill() }
                kills += victims.count
                if victims.count == 2 {
                    let (argumentsA, argumentsB) = (arguments(0), arguments(1))
                    async let restartedA = CrashServeProcess.start(arguments: argumentsA, outputDirectory: logs)
                    async let restartedB = CrashServeProcess.start(arguments: argumentsB, outputDirectory: logs)
                    nodes = [try await restartedA, try await restartedB]
                } else {
                    for index in victims {
                        nodes[index] = try await CrashServeProcess.start(
                            arguments: arguments(index),
                            outputDirectory: logs
                        )
                    }
                }
                try await Self.waitForStep(after: step, of: id, on: nodes[0], seconds: 20)
            }
            let rollout = try await Self.rollout(nodes[1], id)
            try #require(rollout["state"] == "completed", "not completed in time: \(rollout)")
            Self.verifyDecisions(rollout, steps: steps)
        }
        try await Self.verifyVersions(rollouts: rollouts, steps: steps, node: nodes[1])
        print("RolloutTwoNodeTests: \(rollouts) rollouts of \(count) steps, \(kills) SIGKILLs")
        for node in nodes { node.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A project, an environment and a template.
    static func setUp(_ node: CrashServeProcess) async throws {
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
    }

    /// Creates and starts a rollout with no hold time and one unit per arm, whose guardrail never
    /// fires (no crash is sent).
    static func start(_ id: String, steps: [Int], through node: CrashServeProcess) async throws {
        let plan: JSONValue = [
            "id": .string(id),
            "parameters": [["key": "image_cache", "value": .string("v-\(id)")]],
            "steps": .array(steps.map { .number(JSONNumber($0)) }),
            "minimumHoldSeconds": 0,
            "minimumUnitsPerArm": 1,
            "guardrails": [["event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0.5]],
        ]
        let created = try await node.send("POST", environmentPath + "/rollouts", key: adminKey, json: plan)
        try #require(created.status == 201, "\(created.text)")
        let started = try await node.send("POST", environmentPath + "/rollouts/\(id)/start", key: adminKey)
        try #require(started.status == 200, "\(started.text)")
    }

    static func rollout(_ node: CrashServeProcess, _ id: String) async throws -> JSONObject {
        let reply = try await node.send("GET", environmentPath + "/rollouts/\(id)", key: adminKey)
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
    static func waitForStep(after step: Int, of id: String, on node: CrashServeProcess, seconds: Double) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let rollout = try await rollout(node, id)
            if rollout["state"] != "running" || Self.step(rollout) != step { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The decisions: a start, then one advance per step and the completion, in order (holds
    /// for missing exposures, at most one a step, may come between).
    static func verifyDecisions(_ rollout: JSONObject, steps: [Int]) {
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
    }

    /// The versions: the template, then exactly one publish per step of each rollout, in order.
    static func verifyVersions(rollouts: Int, steps: [Int], node: CrashServeProcess) async throws {
        let list = try await node.send("GET", environmentPath + "/versions?pageSize=300", key: adminKey)
        try #require(list.status == 200, "\(list.text)")
        let versions = (list.json?.objectValue?["versions"]?.arrayValue ?? []).compactMap(\.objectValue)
            .sorted {
                Int($0["versionNumber"]?.stringValue ?? "") ?? 0 < Int($1["versionNumber"]?.stringValue ?? "") ?? 0
            }
        let numbers = versions.compactMap { $0["versionNumber"]?.stringValue.flatMap { Int($0) } }
        #expect(numbers == Array(1...(rollouts * steps.count + 1)), "the template and one publish per step: \(numbers)")
        let descriptions = versions.dropFirst().map { $0["description"]?.stringValue ?? "" }
        let expected = (1...rollouts).flatMap { number in
            steps.enumerated().map { index, percent in
                "rollout \(rolloutId(number)): step \(index + 1) of \(steps.count), \(percent) %"
            }
        }
        #expect(descriptions == expected, "every automatic publish once, in order: \(descriptions)")
    }
}
