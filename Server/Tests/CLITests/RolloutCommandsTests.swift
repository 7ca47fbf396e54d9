import Foundation
import TestSupport
import Testing
import VaneCore

/// `vane rollouts` against a real `vane serve` process: a plan created, started, paused, resumed,
/// shown with its decisions and stopped; a bad plan refused naming the field.
@Suite(.serialized, .timeLimit(.minutes(5))) struct RolloutCommandsTests {
    static let plan = """
        {"id": "banner-test", "parameters": [{"key": "banner_text", "value": "rolled"}], "steps": [10, 50, 100],
         "guardrails": [{"event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0.01}]}
        """

    @Test func aRolloutIsCreatedStartedPausedResumedShownAndStopped() async throws {
        let server = try await ServeProcess.start()
        defer { _ = server.stop() }
        let file = try CLIRunner.temporaryFile(Self.plan, name: "plan.json")
        let created = try await server.run(["rollouts", "create", file])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Created rollout banner-test"), "\(created.stdout)")
        #expect(created.stdout.contains("vane rollouts start banner-test"), "\(created.stdout)")

        let started = try await server.run(["rollouts", "start", "banner-test"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout.contains("rollout banner-test is running, step 1 of 3 (10 %)"), "\(started.stdout)")
        let paused = try await server.run(["rollouts", "pause", "banner-test"])
        #expect(paused.stdout.contains("is paused"), "\(paused.stdout)\(paused.stderr)")
        let resumed = try await server.run(["rollouts", "resume", "banner-test"])
        #expect(resumed.stdout.contains("is running"), "\(resumed.stdout)\(resumed.stderr)")

        let status = try await server.run(["rollouts", "status", "banner-test"])
        let lines = status.stdout.split(separator: "\n")
        #expect(lines.first?.contains("rollout banner-test is running, step 1 of 3") == true, "\(status.stdout)")
        #expect(lines.dropFirst().map { $0.split(separator: " ").dropFirst(3).first } == ["start", "pause", "resume"])
        let listed = try await server.run(["rollouts", "status"])
        #expect(listed.stdout.split(separator: "\n").count == 1, "\(listed.stdout)")

        let stopped = try await server.run(["rollouts", "stop", "banner-test"])
        #expect(stopped.stdout.contains("is stopped"), "\(stopped.stdout)\(stopped.stderr)")
        let again = try await server.run(["rollouts", "start", "banner-test"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("is stopped, so it cannot start"), "\(again.stderr)")
    }

    @Test func aBadPlanIsRefusedNamingTheField() async throws {
        let server = try await ServeProcess.start()
        defer { _ = server.stop() }
        let bad = Self.plan.replacingOccurrences(of: "[10, 50, 100]", with: "[10, 5, 100]")
        let file = try CLIRunner.temporaryFile(bad, name: "plan.json")
        let refused = try await server.run(["rollouts", "create", file])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the first: steps[1]"), "\(refused.stderr)")
        #expect(refused.stderr.contains("steps must increase"), "\(refused.stderr)")
    }
}
