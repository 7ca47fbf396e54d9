import ExperimentStatistics
import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The rollout simulator (issue #30, "Proof"): simulated units arrive, are bucketed, exposed and
/// crash at their arm's rate, while a clock moves 5 minutes per look and the guard decides.
///
/// Two drivers share the scenarios and the decisions:
/// - ``runDecisions(_:seed:record:)`` draws each look's exposures and crashes unit by unit and
///   passes the step experiment's sums through the code the guard runs after reading its store —
///   ``AlwaysValidHistory/recordLook(_:configuration:)`` (what the tally store does with every
///   batch), ``ExperimentHealth`` and ``RolloutAssessment/assess`` — and acts on the verdict as
///   ``RolloutGuard/decide(_:)`` does. Thousands of simulated days a minute: the 1,000-run figures.
/// - ``runServer(_:scenario:clock:seed:record:)`` runs a real server on a real database: units
///   fetch over HTTP (the arm comes from fetch's metadata), send their exposures and crashes
///   through `POST …/events` (the real ingest and tally store), the test clock moves and
///   ``RolloutGuard/pass()`` decides, publishing every step through the one publisher; every
///   unit seen so far is evaluated against each step's served template (membership only grows).
enum RolloutSimulation {
    /// The seconds between two looks.
    static let lookSeconds: Int64 = 300

    /// One simulated world.
    struct Scenario: Sendable {
        var name: String
        var comparisonRate = 0.01
        var treatmentRate = 0.01
        /// The share of the comparison arm's exposures that reach the server: 0.9 makes a 50/45 split.
        var comparisonExposureShare = 1.0
        /// Units arriving per look across the audience; each fetches once and, in an arm, is
        /// exposed once and crashes at most once.
        var arrivalsPerLook = 90
        var days = 14.0
        /// The plan as `POST …/rollouts` takes it.
        var plan: JSONObject

        var looks: Int { Int(days * 86_400) / Int(lookSeconds) }
    }

    /// The plan the figures use: the default steps and error rate, 500 units per arm, each step
    /// held 3 days (so 14 days of looks end at the 50 % step: every look can roll back), a crash
    /// guardrail with no margin.
    static func referencePlan(holdSeconds: Int = 259_200, unitsPerArm: Int = 500) -> JSONObject {
        [
            "id": "simulated",
            "parameters": [["key": "image_cache", "value": "v2"]],
            "minimumHoldSeconds": .number(JSONNumber(holdSeconds)),
            "minimumUnitsPerArm": .number(JSONNumber(unitsPerArm)),
            "guardrails": [["event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0]],
        ]
    }

    static func aa(days: Double = 14) -> Scenario {
        Scenario(name: "A/A", days: days, plan: referencePlan())
    }

    static func crashes(days: Double = 14) -> Scenario {
        Scenario(name: "crash rate 1.0 % → 1.5 %", treatmentRate: 0.015, days: days, plan: referencePlan())
    }

    /// A large jump on few units: 1 % → 60 % crashes, caught at the 1 % step.
    static func largeJump(days: Double = 14) -> Scenario {
        Scenario(name: "crash rate 1 % → 60 %", treatmentRate: 0.6, days: days, plan: referencePlan())
    }

    /// A comparison group without any crash: 0 % → 40 %.
    static func zeroBaseline(days: Double = 14) -> Scenario {
        Scenario(
            name: "crash rate 0 % → 40 %",
            comparisonRate: 0,
            treatmentRate: 0.4,
            days: days,
            plan: referencePlan()
        )
    }

    static func sampleRatio(days: Double = 14) -> Scenario {
        Scenario(name: "50/45 sample ratio", comparisonExposureShare: 0.9, days: days, plan: referencePlan())
    }

    /// One look as the guard read it: the step experiment's sums, the guardrail's running interval
    /// and the verdict. The Python check recomputes the interval, the verdict and the p-value.
    struct Look: Codable, Sendable {
        var run: Int
        var look: Int
        var step: Int
        var treatmentUnits: Int
        var comparisonUnits: Int
        var treatmentConverted: Int
        var comparisonConverted: Int
        var lower: Double?
        var upper: Double?
        var worse: Bool
        var sampleRatioPValue: Double
        var verdict: String
    }

    /// How a run ended.
    struct Outcome: Codable, Sendable {
        /// `rolled_back`, `completed`, or `running` when the simulated days ran out.
        var ending: String
        /// The index of the step it ended on.
        var step: Int
        /// The look it ended on.
        var look: Int
        /// The arms' exposed units in that step's experiment at the end (a roll back: at detection).
        var treatmentUnits: Int
        var comparisonUnits: Int
        /// The step of the first hold, and whether a sample-ratio mismatch made it.
        var firstHoldStep: Int?
        var heldForSampleRatio: Bool
        /// Steps taken to the next step while the arms' split was wrong (any advance in a 50/45 run).
        var advances: Int

        /// Where every run starts.
        static let beforeTheFirstLook = Outcome(
            ending: "running",
            step: 0,
            look: 0,
            treatmentUnits: 0,
            comparisonUnits: 0,
            firstHoldStep: nil,
            heldForSampleRatio: false,
            advances: 0
        )
    }

    /// The plan as the server reads it (the real reader), with a fixed seed.
    static func readPlan(_ scenario: Scenario) throws -> RolloutPlan {
        try RolloutPlanReader.read(scenario.plan, seed: "rollout-simulated").get()
    }

    /// One arm's running sums in the decision driver.
    private struct Arm {
        var units = 0
        var converted = 0

        func aggregates(_ name: String, weight: Double, event: String) -> VariantAggregates {
            VariantAggregates(
                name: name,
                splitWeight: weight,
                exposedUnits: units,
                metrics: [
                    event: MetricAggregates(
                        convertedUnits: converted,
                        valueSum: Double(converted),
                        valueSumOfSquares: Double(converted)
                    )
                ]
            )
        }
    }

    /// One run of the decision driver; `record` gets every look.
    static func runDecisions(_ scenario: Scenario, seed: UInt64, record: ((Look) -> Void)? = nil) throws -> Outcome {
        let plan = try readPlan(scenario)
        let event = plan.guardrails[0].name
        var random = SplitMix64(seed: seed)
        var step = 0
        var stepStart: Int64 = 0
        var treatment = Arm()
        var comparison = Arm()
        var history = AlwaysValidHistory()
        var outcome = Outcome.beforeTheFirstLook
        var heldThisStep = false
        for look in 1...scenario.looks {
            let percent = plan.steps[step]
            let comparisonShare = RolloutPlan.comparisonShare(percent)
            for _ in 0..<scenario.arrivalsPerLook {
                // The unit's bucket: below the share the treatment, in the top slice the comparison.
                let bucket = random.uniform() * 100
                if bucket < percent {
                    treatment.units += 1
                    if random.uniform() < scenario.treatmentRate { treatment.converted += 1 }
                } else if bucket >= 100 - comparisonShare, random.uniform() < scenario.comparisonExposureShare {
                    comparison.units += 1
                    if random.uniform() < scenario.comparisonRate { comparison.converted += 1 }
                }
            }
            let definition = plan.stepExperiment(step: step)
            let aggregates = ExperimentAggregates(
                controlVariant: RolloutPlan.comparisonArm,
                variants: [
                    comparison.aggregates(RolloutPlan.comparisonArm, weight: comparisonShare, event: event),
                    treatment.aggregates(RolloutPlan.treatmentArm, weight: percent, event: event),
                ]
            )
            history.recordLook(aggregates, configuration: definition.analysisConfiguration)
            let now = Int64(look) * lookSeconds * 1000
            let assessment = RolloutAssessment.assess(
                plan,
                step: step,
                stepStart: stepStart,
                now: now,
                aggregates: aggregates,
                history: history,
                health: ExperimentHealth(aggregates: aggregates, threshold: RolloutPlan.sampleRatioThreshold)
            )
            record?(Self.look(assessment, run: 0, look: look, step: step, aggregates: aggregates))
            outcome.look = look
            outcome.step = step
            outcome.treatmentUnits = treatment.units
            outcome.comparisonUnits = comparison.units
            switch assessment.verdict {
            case .wait:
                continue
            case .regression:
                outcome.ending = "rolled_back"
                return outcome
            case .hold:
                if !heldThisStep, outcome.firstHoldStep == nil {
                    outcome.firstHoldStep = step
                    outcome.heldForSampleRatio = assessment.reason.hasPrefix("sample-ratio mismatch")
                }
                heldThisStep = true
            case .advance:
                if scenario.comparisonExposureShare != 1 { outcome.advances += 1 }
                step += 1
                if step == plan.steps.count - 1 {
                    outcome.ending = "completed"
                    outcome.step = step
                    return outcome
                }
                // A new step: a new experiment, its own units, hold time and readings.
                stepStart = now
                treatment = Arm()
                comparison = Arm()
                history = AlwaysValidHistory()
                heldThisStep = false
            }
        }
        return outcome
    }

    static func look(
        _ assessment: RolloutAssessment,
        run: Int,
        look: Int,
        step: Int,
        aggregates: ExperimentAggregates
    ) -> Look {
        func converted(_ arm: String) -> Int {
            aggregates.variants.first { $0.name == arm }?.metrics.values.first?.convertedUnits ?? 0
        }
        let figure = assessment.figures.first
        return Look(
            run: run,
            look: look,
            step: step,
            treatmentUnits: assessment.treatmentUnits,
            comparisonUnits: assessment.comparisonUnits,
            treatmentConverted: converted(RolloutPlan.treatmentArm),
            comparisonConverted: converted(RolloutPlan.comparisonArm),
            lower: figure?.difference?.lower,
            upper: figure?.difference?.upper,
            worse: figure?.worse ?? false,
            sampleRatioPValue: assessment.sampleRatioPValue,
            verdict: assessment.verdict.rawValue
        )
    }

    /// What a server run saw besides its outcome.
    struct ServerRun: Sendable {
        var outcome: Outcome
        /// Every decision's action, in order.
        var actions: [String]
        /// Every decision as `GET …/rollouts/{id}` answers it (time, step, action, reason and
        /// figures), for a failure's message.
        var decisions: [String] = []
        /// Units evaluated at each step, and those that lost the new value at a later step (none).
        var unitsChecked: Int
        var unitsThatLostTheNewValue: Int
    }

    /// One run against the real server (see the type's comment); the template is RolloutTests'.
    static func runServer(
        _ server: TestServer,
        scenario: Scenario,
        clock: TestClock,
        seed: UInt64,
        record: ((Look) -> Void)? = nil
    ) async throws -> ServerRun {
        let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
        let lifecycle = server.application.rolloutLifecycle
        #expect(try await server.publish(RolloutTests.template).status == .ok)
        var plan = scenario.plan
        // The bucketing seed comes from the run's, not the server: the same units fall in the same
        // arms on every run, so a run that fails fails again when it is repeated.
        if plan["seed"] == nil { plan["seed"] = .string("rollout-simulated-\(seed)") }
        let created = try await server.send(.post, RolloutTests.path, json: .object(plan))
        #expect(created.status == .created, "\(created.text)")
        let id = try #require(plan["id"]?.stringValue)
        let started = try await server.send(.post, RolloutTests.path + "/\(id)/start")
        #expect(started.status == .ok, "\(started.text)")

        var random = SplitMix64(seed: seed)
        var seen: [String] = []
        var treated: Set<String> = []
        var lost = 0
        var checked = 0
        var outcome = Outcome.beforeTheFirstLook
        var step = 0
        var eventNumber = 0
        for look in 1...scenario.looks {
            clock.advance(seconds: TimeInterval(lookSeconds))
            // A crash after its unit's exposure: only events after the exposure count for its arm.
            let exposed = Clock.rfc3339(milliseconds: Clock.milliseconds(clock.now) - 2_000)
            let crashed = Clock.rfc3339(milliseconds: Clock.milliseconds(clock.now) - 1_000)
            var events: [JSONValue] = []
            for _ in 0..<scenario.arrivalsPerLook {
                let unit = "unit-\(seen.count)"
                seen.append(unit)
                let reply = try await server.send(
                    .post,
                    TestServer.demoPath + "/fetch",
                    json: ["context": ["randomizationId": .string(unit)]]
                )
                let body = try #require(reply.object, "fetch answered \(reply.status)")
                let assignment = body["metadata"]?.objectValue?["image_cache"]?.objectValue?["experiment"]?.objectValue
                guard let key = assignment?["key"]?.stringValue, let arm = assignment?["variant"]?.stringValue else {
                    continue
                }
                let isTreatment = arm == RolloutPlan.treatmentArm
                if !isTreatment, random.uniform() >= scenario.comparisonExposureShare { continue }
                eventNumber += 1
                events.append(
                    [
                        "id": .string("x-\(eventNumber)"), "type": "exposure", "unit": .string(unit),
                        "time": .string(exposed), "experiment": .string(key), "variant": .string(arm),
                        "templateVersion": body["templateVersion"] ?? .null,
                    ]
                )
                if random.uniform() < (isTreatment ? scenario.treatmentRate : scenario.comparisonRate) {
                    events.append(
                        [
                            "id": .string("c-\(eventNumber)"), "type": "metric", "unit": .string(unit),
                            "time": .string(crashed), "name": "app_crashed",
                        ]
                    )
                }
            }
            if !events.isEmpty {
                let reply = try await server.send(.post, RolloutTests.eventsPath, json: ["events": .array(events)])
                #expect(reply.status == .ok, "\(reply.text.prefix(600))")
            }
            await server.application.rolloutGuard.pass()

            let rollout = try #require(try await lifecycle.rollouts.rollout(environment, id: id))
            outcome.look = look
            if rollout.step != step || rollout.state == .completed {
                // A new step: every unit seen so far keeps the new value if it had it.
                let served = try #require(server.application.cache.template(for: environment))
                var now: Set<String> = []
                for unit in seen {
                    let value = served.compiled.value(
                        forKey: "image_cache",
                        context: EvaluationContext(randomizationId: unit)
                    )
                    if value?.stringValue == "v2" { now.insert(unit) }
                }
                if rollout.state != .rolledBack {
                    checked += seen.count
                    lost += treated.subtracting(now).count
                }
                treated = now
                if rollout.step > step, rollout.state != .rolledBack { outcome.advances += rollout.step - step }
                step = rollout.step
            }
            let decisions = try await lifecycle.rollouts.decisions(environment, id: id)
            if outcome.firstHoldStep == nil, let hold = decisions.first(where: { $0.action == .hold }) {
                outcome.firstHoldStep = hold.step
                outcome.heldForSampleRatio = hold.reason.hasPrefix("sample-ratio mismatch")
            }
            if let figures = decisions.last?.figures, decisions.last?.action == .rollBack {
                outcome.treatmentUnits = figures["treatmentUnits"]?.numberValue.map { Int($0.value) } ?? 0
                outcome.comparisonUnits = figures["comparisonUnits"]?.numberValue.map { Int($0.value) } ?? 0
            }
            switch rollout.state {
            case .rolledBack, .completed:
                outcome.ending = rollout.state.rawValue
                outcome.step = rollout.step
                return ServerRun(
                    outcome: outcome,
                    actions: decisions.map(\.action.rawValue),
                    decisions: decisions.map { RolloutJSON.decision($0).serialized() },
                    unitsChecked: checked,
                    unitsThatLostTheNewValue: lost
                )
            default:
                outcome.step = rollout.step
            }
            // The reading the guard decides on, and the sums it read, for the scipy check.
            if let record, let assessment = try await lifecycle.currentAssessment(rollout),
                let (experiment, stored) = try await lifecycle.experiments.experiments.experimentWithTally(
                    environment,
                    key: rollout.stepExperimentKey
                )
            {
                let aggregates = stored.tally.aggregates(for: experiment.definition)
                record(Self.look(assessment, run: 0, look: look, step: rollout.step, aggregates: aggregates))
            }
        }
        let decisions = try await lifecycle.rollouts.decisions(environment, id: id)
        return ServerRun(
            outcome: outcome,
            actions: decisions.map(\.action.rawValue),
            decisions: decisions.map { RolloutJSON.decision($0).serialized() },
            unitsChecked: checked,
            unitsThatLostTheNewValue: lost
        )
    }
}
