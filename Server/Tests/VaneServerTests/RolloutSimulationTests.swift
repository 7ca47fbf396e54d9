import Foundation
import Synchronization
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The rollout simulator (``RolloutSimulation``), briefly: few runs with fixed seeds, each of which
/// fails when the guard breaks (never rolls back, always rolls back, ignores the split, moves
/// units between arms). `scripts/rollout-simulation` makes the full figures (``RolloutSimulationFullRunTests``).
@Suite(.timeLimit(.minutes(10))) struct RolloutSimulationTests {
    /// Seconds of arithmetic: on a thread of its own, not one of the two the other suites' async
    /// work shares.
    @Test func theGuardsDecisionsOverFourteenSimulatedDays() async throws {
        try await offCooperativePool { try Self.decisionRuns() }
    }

    static func decisionRuns() throws {
        // A/A: 20 runs of 4,032 looks; the full run rolls back about 2 % of them, so 3 of 20 would be
        // far off (p < 1 %).
        var aaRolledBack = 0
        for seed in 1...20 {
            let outcome = try RolloutSimulation.runDecisions(RolloutSimulation.aa(), seed: UInt64(seed))
            if outcome.ending == "rolled_back" { aaRolledBack += 1 }
            #expect(outcome.ending != "completed", "a 3-day hold per step leaves it at 50 % on day 14")
        }
        #expect(aaRolledBack <= 2, "\(aaRolledBack) of 20 harmless rollouts rolled back")

        // 1.0 % → 1.5 % crashes: every run caught, none advanced to completion.
        for seed in 1...5 {
            let outcome = try RolloutSimulation.runDecisions(RolloutSimulation.crashes(), seed: UInt64(seed))
            #expect(outcome.ending == "rolled_back", "seed \(seed): \(outcome)")
        }

        // A large jump and a comparison group without crashes: rolled back at the 1 % step, on few units.
        for scenario in [RolloutSimulation.largeJump(), RolloutSimulation.zeroBaseline()] {
            for seed in 1...5 {
                let outcome = try RolloutSimulation.runDecisions(scenario, seed: UInt64(seed))
                #expect(
                    outcome.ending == "rolled_back" && outcome.step == 0,
                    "\(scenario.name) seed \(seed): \(outcome)"
                )
                #expect(max(outcome.treatmentUnits, outcome.comparisonUnits) < 200, "\(scenario.name): \(outcome)")
            }
        }

        // A 50/45 split: held for the mismatch, never completed.
        for seed in 1...5 {
            let outcome = try RolloutSimulation.runDecisions(RolloutSimulation.sampleRatio(), seed: UInt64(seed))
            #expect(outcome.firstHoldStep != nil && outcome.heldForSampleRatio, "seed \(seed): \(outcome)")
            #expect(outcome.ending != "completed", "seed \(seed): \(outcome)")
        }
    }

    /// A small world for the real server: every step reachable in a simulated day.
    static func serverScenario(
        _ name: String,
        treatmentRate: Double = 0.01,
        comparisonShare: Double = 1,
        steps: [Double] = [1, 5, 10, 25, 50, 100]
    ) -> RolloutSimulation.Scenario {
        var plan = RolloutSimulation.referencePlan(holdSeconds: 3_600, unitsPerArm: 20)
        plan["steps"] = .array(steps.map { .number(JSONNumber($0)) })
        return RolloutSimulation.Scenario(
            name: name,
            treatmentRate: treatmentRate,
            comparisonExposureShare: comparisonShare,
            arrivalsPerLook: 30,
            days: 1,
            plan: plan
        )
    }

    @Test(arguments: TestDatabase.allCases)
    func theRealServerAdvancesRollsBackAndHoldsAsSimulatedUnitsArrive(database: TestDatabase) async throws {
        // Harmless: every step in turn, and no unit seen so far ever loses the new value.
        let clock = TestClock()
        try await TestServer.run(database, configure: RolloutSimulationTests.replaying, clock: clock) { server in
            let run = try await RolloutSimulation.runServer(
                server,
                scenario: Self.serverScenario("A/A"),
                clock: clock,
                seed: 1
            )
            #expect(run.outcome.ending == "completed", "\(run.outcome) \(run.decisions)")
            // A hold for missing exposures may come first: at 1 % an arm can still be empty after an hour.
            #expect(
                run.actions.filter { $0 != "hold" } == [
                    "start", "advance", "advance", "advance", "advance", "complete",
                ]
            )
            #expect(run.unitsChecked > 1_000)
            #expect(run.unitsThatLostTheNewValue == 0)
        }
        // 30 % crashes against 10 %: rolled back at the first step.
        let crashClock = TestClock()
        try await TestServer.run(database, configure: RolloutSimulationTests.replaying, clock: crashClock) { server in
            let run = try await RolloutSimulation.runServer(
                server,
                scenario: {
                    var scenario = Self.serverScenario("crashes", treatmentRate: 0.3, steps: [50, 100])
                    scenario.comparisonRate = 0.1
                    scenario.plan["minimumHoldSeconds"] = 14_400
                    return scenario
                }(),
                clock: crashClock,
                seed: 2
            )
            #expect(run.outcome.ending == "rolled_back", "\(run.outcome) \(run.decisions)")
            #expect(run.actions == ["start", "roll_back"])
        }
        // Three quarters of the comparison's exposures lost: held for the mismatch, never advanced.
        // Not half: a 2:1 split on the ~270 units of the first look the hold time allows fits by
        // chance (p ≥ 0.001, so the step advances) in about 1 % of bucketing seeds (docs/ROLLOUTS.md).
        let ratioClock = TestClock()
        try await TestServer.run(database, configure: RolloutSimulationTests.replaying, clock: ratioClock) { server in
            var scenario = Self.serverScenario("50/12.5", comparisonShare: 0.25, steps: [50, 100])
            scenario.days = 0.25
            let run = try await RolloutSimulation.runServer(server, scenario: scenario, clock: ratioClock, seed: 3)
            #expect(run.outcome.heldForSampleRatio, "\(run.outcome) \(run.decisions)")
            #expect(run.outcome.ending == "running" && run.outcome.advances == 0, "\(run.outcome) \(run.decisions)")
            #expect(run.actions == ["start", "hold"], "told once: \(run.decisions)")
        }
    }

    /// A server the simulation replays looks on: no address limit (every unit comes from
    /// loopback), and no guard service, since the simulation decides each look's pass itself
    /// and a pass the service started late would read one look's events at the next look's time.
    static func replaying(_ configuration: inout ServerConfiguration) {
        configuration.addressRateLimit = 0
        configuration.runsRolloutGuard = false
    }

    static func json<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValue.parse(String(decoding: JSONEncoder().encode(value), as: UTF8.self))
    }
}

/// The full figures in a suite of their own: 1,000 runs of each scenario take 15-25 minutes of a
/// loaded 2-core machine, past the brief suite's limit.
@Suite(.timeLimit(.minutes(60))) struct RolloutSimulationFullRunTests {
    /// The full figures: `scripts/rollout-simulation` sets VANE_ROLLOUT_SIMULATION_OUTPUT (and
    /// optionally VANE_ROLLOUT_SIMULATION_RUNS, default 1,000) and checks the file with scipy.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["VANE_ROLLOUT_SIMULATION_OUTPUT"] != nil))
    func fullRun() async throws {
        let environment = ProcessInfo.processInfo.environment
        let output = try #require(environment["VANE_ROLLOUT_SIMULATION_OUTPUT"])
        let runs = Int(environment["VANE_ROLLOUT_SIMULATION_RUNS"] ?? "") ?? 1_000
        /// Runs whose every look the file keeps, for the reference check.
        let recorded = 3
        let scenarios = [
            ("aa", RolloutSimulation.aa()), ("crashes", RolloutSimulation.crashes()),
            ("largeJump", RolloutSimulation.largeJump()), ("zeroBaseline", RolloutSimulation.zeroBaseline()),
            ("sampleRatio", RolloutSimulation.sampleRatio()),
        ]
        var document: JSONObject = ["runs": .number(JSONNumber(runs))]

        let started = Date()
        for (key, scenario) in scenarios {
            // Both cores: runs are independent, each with its own seed.
            let outcomes = try await withThrowingTaskGroup(of: (Int, RolloutSimulation.Outcome).self) { group in
                var next = 0
                var results: [(Int, RolloutSimulation.Outcome)] = []
                for _ in 0..<max(1, ProcessInfo.processInfo.activeProcessorCount) where next < runs {
                    let seed = next
                    group.addTask { (seed, try RolloutSimulation.runDecisions(scenario, seed: UInt64(seed + 1))) }
                    next += 1
                }
                while let result = try await group.next() {
                    results.append(result)
                    if next < runs {
                        let seed = next
                        group.addTask { (seed, try RolloutSimulation.runDecisions(scenario, seed: UInt64(seed + 1))) }
                        next += 1
                    }
                }
                return results.sorted { $0.0 < $1.0 }.map(\.1)
            }
            var looks: [RolloutSimulation.Look] = []
            for run in 0..<min(recorded, runs) {
                _ = try RolloutSimulation.runDecisions(scenario, seed: UInt64(run + 1)) { look in
                    var look = look
                    look.run = run
                    looks.append(look)
                }
            }
            document[key] = [
                "scenario": .string(scenario.name),
                "looksPerRun": .number(JSONNumber(scenario.looks)),
                "outcomes": try RolloutSimulationTests.json(outcomes),
                "looks": try RolloutSimulationTests.json(looks),
            ]
        }
        // The real server on SQLite, with its looks as the store kept them.
        var serverLooks: [RolloutSimulation.Look] = []
        var serverRuns: [JSONValue] = []
        for (run, scenario) in [
            RolloutSimulationTests.serverScenario("A/A"),
            RolloutSimulationTests.serverScenario("crashes", treatmentRate: 0.05),
        ].enumerated() {
            let clock = TestClock()
            let result = try await TestServer.run(.sqlite, configure: RolloutSimulationTests.replaying, clock: clock) {
                server in
                let looks = Mutex<[RolloutSimulation.Look]>([])
                let result = try await RolloutSimulation.runServer(
                    server,
                    scenario: scenario,
                    clock: clock,
                    seed: UInt64(run + 1)
                ) { look in
                    var look = look
                    look.run = run
                    looks.withLock { $0.append(look) }
                }
                return (result, looks.withLock { $0 })
            }
            #expect(result.0.unitsThatLostTheNewValue == 0)
            serverLooks += result.1
            serverRuns.append(
                [
                    "scenario": .string(scenario.name), "outcome": try RolloutSimulationTests.json(result.0.outcome),
                    "actions": .array(result.0.actions.map(JSONValue.string)),
                    "unitsChecked": .number(JSONNumber(result.0.unitsChecked)),
                    "unitsThatLostTheNewValue": .number(JSONNumber(result.0.unitsThatLostTheNewValue)),
                ]
            )
        }
        document["server"] = ["runs": .array(serverRuns), "looks": try RolloutSimulationTests.json(serverLooks)]
        document["seconds"] = .number(JSONNumber(Date().timeIntervalSince(started)))
        try Data(JSONValue.object(document).serialized(.compact).utf8).write(to: URL(fileURLWithPath: output))
    }
}
