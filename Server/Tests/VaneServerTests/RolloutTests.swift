import Foundation
import HTTPTypes
import SQLKit
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Progressive rollouts (issue #30) over real HTTP, on both databases, with the test clock for
/// hold times and the guard's passes called directly instead of waiting for its minute.
@Suite(.timeLimit(.minutes(10))) struct RolloutTests {
    static let path = TestServer.demoPath + "/rollouts"
    static let eventsPath = TestServer.demoPath + "/events"

    /// A template with `image_cache` ("v1") and an `ios_users` audience.
    static let template: JSONValue = [
        "conditions": [["name": "ios_users", "expression": "device.os == 'ios'"]],
        "parameters": [
            "image_cache": ["defaultValue": ["value": "v1"], "valueType": "STRING"],
            "greeting": ["defaultValue": ["value": "hello"], "valueType": "STRING"],
        ],
    ]

    /// A plan for `image_cache` → v2, watching crashes (a conversion, more is worse).
    static func plan(
        id: String = "image-cache-v2",
        steps: [Double] = [10, 50, 100],
        hold: Int = 3_600,
        units: Int = 50,
        margin: Double = 0,
        onRegression: String = "roll_back"
    ) -> JSONValue {
        [
            "id": .string(id),
            "description": "the new image cache",
            "parameters": [["key": "image_cache", "value": "v2"]],
            "steps": .array(steps.map { .number(JSONNumber($0)) }),
            "minimumHoldSeconds": .number(JSONNumber(hold)),
            "minimumUnitsPerArm": .number(JSONNumber(units)),
            "onRegression": .string(onRegression),
            "guardrails": [
                [
                    "event": "app_crashed", "kind": "conversion", "bad": "increase",
                    "margin": .number(JSONNumber(margin)),
                ]
            ],
        ]
    }

    /// Publishes the template, creates the plan and starts it.
    @discardableResult
    static func started(_ server: TestServer, _ plan: JSONValue = plan()) async throws -> JSONObject {
        #expect(try await server.publish(template).status == .ok)
        let created = try await server.send(.post, path, json: plan)
        #expect(created.status == .created, "\(created.text)")
        let id = try #require(plan.objectValue?["id"]?.stringValue)
        let started = try await server.send(.post, path + "/\(id)/start")
        #expect(started.status == .ok, "\(started.text)")
        return try #require(started.object)
    }

    /// The step experiment of the plan's first step.
    static let firstStep = "rollout-image-cache-v2-1"

    /// Lets the step's hold time (an hour) pass and runs the guard once.
    static func passAfterHold(_ server: TestServer, _ clock: TestClock) async {
        clock.advance(seconds: 3_601)
        await guardOf(server).pass()
    }

    /// `units` exposures per arm to step experiment `experiment`, the first `treatmentCrashes`
    /// treatment and `comparisonCrashes` comparison units crashing, stamped at the test clock.
    /// The exposures name the version a fetch just served, as an app's do, or `templateVersion`.
    static func sendArms(
        _ server: TestServer,
        clock: TestClock,
        experiment: String = firstStep,
        units: (treatment: Int, comparison: Int),
        crashes: (treatment: Int, comparison: Int),
        tag: String = "a",
        untilRolledBack: Bool = false,
        templateVersion: JSONValue? = nil
    ) async throws {
        let (treatment, comparison) = units
        let (treatmentCrashes, comparisonCrashes) = crashes
        let fetched = try await server.send(
            .post,
            TestServer.demoPath + "/fetch",
            json: ["context": ["randomizationId": "sender"]]
        )
        let version = try templateVersion ?? #require(fetched.object?["templateVersion"])
        var events: [JSONValue] = []
        let now = Clock.milliseconds(clock.now)
        func event(_ id: String, _ unit: String, _ offset: Int64, _ members: JSONObject) -> JSONValue {
            var object: JSONObject = [
                "id": .string(id), "unit": .string(unit), "time": .string(Clock.rfc3339(milliseconds: now + offset)),
            ]
            for member in members { object[member.key] = member.value }
            return .object(object)
        }
        // The arms interleaved and the crashes spread evenly, so every batch (every look) holds
        // both arms at their rates.
        let arms = [("treatment", treatment, treatmentCrashes), ("comparison", comparison, comparisonCrashes)]
        for index in 0..<max(treatment, comparison) {
            for (arm, count, crashes) in arms where index < count {
                let unit = "\(tag)-\(arm)-\(index)"
                events.append(
                    event(
                        "x-\(experiment)-\(unit)",
                        unit,
                        -2_000,
                        [
                            "type": "exposure", "experiment": .string(experiment), "variant": .string(arm),
                            "templateVersion": version,
                        ]
                    )
                )
                if index * crashes / count != (index + 1) * crashes / count {
                    events.append(
                        event("c-\(experiment)-\(unit)", unit, -1_000, ["type": "metric", "name": "app_crashed"])
                    )
                }
            }
        }
        for start in stride(from: 0, to: events.count, by: 1_000) {
            let batch = Array(events[start..<min(events.count, start + 1_000)])
            let reply = try await server.send(.post, eventsPath, json: ["events": .array(batch)])
            #expect(reply.status == .ok, "\(reply.text.prefix(600))")
            let rejected = reply.object?["rejected"]?.arrayValue ?? []
            // The server's own guard may roll back between two batches: then the step experiment
            // stops and its exposures are refused, as they should be.
            if untilRolledBack, !rejected.isEmpty, try await rollout(server)["state"] == "rolled_back" { return }
            #expect(rejected.isEmpty, "\(reply.text.prefix(600))")
        }
    }

    static func rollout(_ server: TestServer, _ id: String = "image-cache-v2") async throws -> JSONObject {
        let reply = try await server.send(.get, path + "/\(id)")
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(reply.object)
    }

    static func actions(_ rollout: JSONObject) -> [String] {
        rollout["decisions"]?.arrayValue?.compactMap { $0.objectValue?["action"]?.stringValue } ?? []
    }

    /// `image_cache` as fetch gives it to `unit`, with its metadata.
    static func fetch(_ server: TestServer, unit: String) async throws -> (value: String?, metadata: JSONObject?) {
        let reply = try await server.send(
            .post,
            TestServer.demoPath + "/fetch",
            json: ["context": ["randomizationId": .string(unit)]]
        )
        #expect(reply.status == .ok, "\(reply.text)")
        return (
            reply.object?["entries"]?.objectValue?["image_cache"]?.stringValue,
            reply.object?["metadata"]?.objectValue?["image_cache"]?.objectValue
        )
    }

    static func guardOf(_ server: TestServer) -> RolloutGuard { server.application.rolloutGuard }

    static func stored(_ server: TestServer, _ id: String = "image-cache-v2") async throws -> Rollout {
        try #require(
            try await server.application.rolloutLifecycle.rollouts.rollout(
                EnvironmentKey(projectId: "demo", environmentId: "production"),
                id: id
            )
        )
    }

    @Test(arguments: TestDatabase.allCases)
    func aRolloutAdvancesStepByStepWhileTheDataIsHealthyAndCompletes(database: TestDatabase) async throws {
        let clock = TestClock()
        // Hundreds of fetches from one address: no per-address limit.
        let noAddressLimit: (inout ServerConfiguration) -> Void = { $0.addressRateLimit = 0 }
        try await TestServer.run(database, configure: noAddressLimit, clock: clock) { server in
            let started = try await Self.started(server)
            #expect(started["state"] == "running")
            #expect(started["step"] == 1)
            #expect(started["percent"] == 10)
            #expect(started["stepExperiment"] == "rollout-image-cache-v2-1")

            // Fetch marks the key for both arms, so apps record exposures as for experiments.
            var arms: [String: Int] = [:]
            for index in 0..<400 {
                let (value, metadata) = try await Self.fetch(server, unit: "unit-\(index)")
                let assignment = metadata?["experiment"]?.objectValue
                if let variant = assignment?["variant"]?.stringValue {
                    #expect(assignment?["key"] == "rollout-image-cache-v2-1")
                    arms[variant, default: 0] += 1
                    #expect(value == (variant == "treatment" ? "v2" : "v1"))
                } else {
                    #expect(value == "v1", "outside both arms: the old value")
                }
            }
            #expect((arms["treatment"] ?? 0) > 10 && (arms["comparison"] ?? 0) > 10, "\(arms)")

            try await Self.sendArms(server, clock: clock, units: (200, 200), crashes: (4, 4))
            await Self.guardOf(server).pass()
            #expect(try await Self.rollout(server)["step"] == 1, "the hold time has not passed")

            await Self.passAfterHold(server, clock)
            let second = try await Self.rollout(server)
            #expect(second["step"] == 2, "\(second)")
            #expect(second["percent"] == 50)
            #expect(Self.actions(second) == ["start", "advance"])
            let advance = try #require(second["decisions"]?.arrayValue?.last?.objectValue)
            #expect(advance["actor"]?.stringValue?.hasPrefix("rollout image-cache-v2") == true)
            #expect(advance["figures"]?.objectValue?["treatmentUnits"] == 200, "\(advance)")

            // The new step counts afresh: no units yet, so past its hold time it holds, and says so.
            await Self.passAfterHold(server, clock)
            #expect(try await Self.rollout(server)["step"] == 2)
            try await Self.sendArms(
                server,
                clock: clock,
                experiment: "rollout-image-cache-v2-2",
                units: (100, 100),
                crashes: (2, 2),
                tag: "b"
            )
            await Self.guardOf(server).pass()
            let done = try await Self.rollout(server)
            #expect(done["state"] == "completed", "\(done)")
            #expect(Self.actions(done) == ["start", "advance", "hold", "complete"])
            for index in 0..<50 {
                #expect(try await Self.fetch(server, unit: "unit-\(index)").value == "v2", "everyone has the new value")
            }
            let experiments = try await server.send(.get, ExperimentAPITests.path + "?status=running")
            #expect(experiments.object?["experiments"]?.arrayValue == [], "no step experiment runs after completion")

            let history = try await server.send(.get, TestServer.demoPath + "/versions")
            #expect(history.text.contains("rollout image-cache-v2 (vane rollout guard)"), "published as the rollout")
            let audit = try await server.send(.get, TestServer.demoPath + "/audit?action=rollout.advance")
            #expect(audit.object?["entries"]?.arrayValue?.count == 2, "\(audit.text.prefix(400))")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func membershipOnlyGrowsAcrossTheStepsForEveryUnit(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.started(server, Self.plan(steps: [1, 5, 10, 25, 50, 100]))
            let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
            let units = (0..<3_000).map { "member-\($0)" }
            var treated: Set<String> = []
            var lastShare = 0.0
            for step in 0..<6 {
                let served = try #require(server.application.cache.template(for: environment))
                var now: Set<String> = []
                for unit in units {
                    let value = served.compiled.value(
                        forKey: "image_cache",
                        context: EvaluationContext(randomizationId: unit)
                    )
                    if value?.stringValue == "v2" { now.insert(unit) }
                }
                #expect(treated.isSubset(of: now), "step \(step + 1): a unit lost the new value")
                let share = Double(now.count) / Double(units.count)
                #expect(share >= lastShare)
                treated = now
                lastShare = share
                let rollout = try await Self.stored(server)
                guard step < 5 else { break }
                let assessment = RolloutAssessment(
                    verdict: .advance,
                    reason: "test",
                    figures: [],
                    treatmentUnits: 0,
                    comparisonUnits: 0,
                    sampleRatioPValue: 1
                )
                try await server.application.rolloutLifecycle.advance(rollout, assessment: assessment)
            }
            #expect(treated.count == units.count, "at 100 % everyone")
            #expect(try await Self.rollout(server)["state"] == "completed")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aGuardrailRegressionRollsBackAndClientsGetTheOldValue(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, configure: WebhookAPITests.allowingLoopback, clock: clock) { server in
            try await Self.subscribe(server)
            try await Self.started(server, Self.plan(steps: [50, 100]))
            let treatedUnit = try #require(
                try await (0..<200).asyncFirst { try await Self.fetch(server, unit: "unit-\($0)").value == "v2" }
            )
            // Crashes: 1 % of the comparison, 3 % of the treatment, 10,000 units each.
            try await Self.sendArms(
                server,
                clock: clock,
                units: (10_000, 10_000),
                crashes: (300, 100),
                untilRolledBack: true
            )
            // No waiting for the hold time: a regression rolls back at once.
            await Self.guardOf(server).pass()
            let rolledBack = try await Self.rollout(server)
            #expect(rolledBack["state"] == "rolled_back", "\(rolledBack)")
            let decision = try #require(rolledBack["decisions"]?.arrayValue?.last?.objectValue)
            #expect(decision["action"] == "roll_back")
            #expect(decision["reason"]?.stringValue?.contains("app_crashed") == true)
            let figure = try #require(decision["figures"]?.objectValue?["guardrails"]?.arrayValue?.first?.objectValue)
            #expect(figure["worse"] == true)
            let lower = try #require(figure["difference"]?.objectValue?["lower"]?.numberValue?.value)
            #expect(lower > 0, "the treatment is worse beyond doubt: \(figure)")

            #expect(try await Self.fetch(server, unit: "unit-\(treatedUnit)").value == "v1", "back to the old value")
            let live = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(!live.text.contains("rollout_image_cache_v2"), "the rollout's conditions are gone")
            let webhookTypes = try await Self.outboxTypes(server)
            #expect(webhookTypes.contains("rollout.rolled_back"), "\(webhookTypes)")
        }
    }

    /// The guard's first step's decisions after `units` per arm with `crashes`, sent as one batch
    /// (one look), the guard run once and, unless it rolled back, once more after the hold time.
    static func decideOnOneLook(
        _ database: TestDatabase,
        units: (treatment: Int, comparison: Int),
        crashes: (treatment: Int, comparison: Int)
    ) async throws -> (rollout: JSONObject, step: Int) {
        let clock = TestClock()
        return try await TestServer.run(database, clock: clock) { server in
            try await Self.started(server)
            try await Self.sendArms(server, clock: clock, units: units, crashes: crashes, untilRolledBack: true)
            await Self.guardOf(server).pass()
            if try await Self.rollout(server)["state"] != "rolled_back" { await Self.passAfterHold(server, clock) }
            return (try await Self.rollout(server), try await Self.stored(server).step)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aLargeJumpOnAFewHundredUnitsRollsBackAtThatStep(database: TestDatabase) async throws {
        // 1 % → 60 % crashes, 300 units per arm: with τ = 0.1 × the comparison's rate this look
        // said nothing and the step advanced after its hold.
        let (rollout, step) = try await Self.decideOnOneLook(database, units: (300, 300), crashes: (180, 3))
        #expect(rollout["state"] == "rolled_back", "\(rollout)")
        #expect(Self.actions(rollout) == ["start", "roll_back"])
        #expect(step == 0, "rolled back at the step it was caught in")
        let figure = rollout["decisions"]?.arrayValue?.last?.objectValue?["figures"]?.objectValue?["guardrails"]?
            .arrayValue?.first?.objectValue
        let lower = try #require(figure?["difference"]?.objectValue?["lower"]?.numberValue?.value, "\(rollout)")
        #expect(lower > 0.3, "the interval is far above 0: \(lower)")
    }

    @Test(arguments: TestDatabase.allCases)
    func aCrashRateRisingFromZeroRollsBack(database: TestDatabase) async throws {
        // 0 % → 40 %: a comparison group without any crash gave τ = 0, a look that said nothing.
        let (rollout, step) = try await Self.decideOnOneLook(database, units: (200, 200), crashes: (80, 0))
        #expect(rollout["state"] == "rolled_back", "\(rollout)")
        #expect(Self.actions(rollout) == ["start", "roll_back"])
        #expect(step == 0)
        let figure = rollout["decisions"]?.arrayValue?.last?.objectValue?["figures"]?.objectValue?["guardrails"]?
            .arrayValue?.first?.objectValue
        #expect(figure?["comparison"] == 0, "\(rollout)")
        #expect(figure?["worse"] == true)
    }

    @Test(arguments: TestDatabase.allCases)
    func anAAWithNoEventInEitherArmIsReadAndAdvances(database: TestDatabase) async throws {
        // No crash anywhere: the guard reads an interval around 0 (before, no reading at all) and
        // never rolls back; past the hold time the step advances.
        let (rollout, step) = try await Self.decideOnOneLook(database, units: (200, 200), crashes: (0, 0))
        #expect(rollout["state"] == "running", "\(rollout)")
        #expect(Self.actions(rollout) == ["start", "advance"])
        #expect(step == 1)
        let figure = try #require(
            rollout["decisions"]?.arrayValue?.last?.objectValue?["figures"]?.objectValue?["guardrails"]?.arrayValue?
                .first?.objectValue
        )
        #expect(figure["worse"] == false)
        let difference = try #require(figure["difference"]?.objectValue, "a reading: \(figure)")
        let lower = try #require(difference["lower"]?.numberValue?.value)
        let upper = try #require(difference["upper"]?.numberValue?.value)
        #expect(lower < 0 && upper > 0 && upper < 0.1, "around 0 and narrow: [\(lower), \(upper)]")
    }

    @Test(arguments: TestDatabase.allCases)
    func aSampleRatioMismatchHoldsOnceAndTellsPeople(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, configure: WebhookAPITests.allowingLoopback, clock: clock) { server in
            try await Self.subscribe(server)
            try await Self.started(server)
            try await Self.sendArms(server, clock: clock, units: (1_000, 800), crashes: (10, 8))
            await Self.passAfterHold(server, clock)
            await Self.guardOf(server).pass()
            let held = try await Self.rollout(server)
            #expect(held["state"] == "running")
            #expect(held["step"] == 1, "a mismatch never advances")
            #expect(Self.actions(held) == ["start", "hold"], "told once: \(Self.actions(held))")
            let reason = held["decisions"]?.arrayValue?.last?.objectValue?["reason"]?.stringValue ?? ""
            #expect(reason.contains("sample-ratio mismatch"), "\(reason)")
            #expect(try await Self.outboxTypes(server).contains("rollout.held"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aHealthCheckWarningHoldsTheRolloutAndTellsPeople(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, configure: WebhookAPITests.allowingLoopback, clock: clock) { server in
            try await Self.subscribe(server)
            try await Self.started(server)
            // Healthy figures, but the exposures name a version no app fetched from this server.
            try await Self.sendArms(server, clock: clock, units: (100, 100), crashes: (1, 1), templateVersion: "99")
            await Self.passAfterHold(server, clock)
            await Self.guardOf(server).pass()
            let held = try await Self.rollout(server)
            #expect(held["state"] == "running")
            #expect(held["step"] == 1, "a health-check warning never advances")
            #expect(Self.actions(held) == ["start", "hold"], "told once: \(Self.actions(held))")
            let decision = try #require(held["decisions"]?.arrayValue?.last?.objectValue)
            let reason = decision["reason"]?.stringValue ?? ""
            #expect(reason.hasPrefix("health check: 200 exposure(s) name a template version"), "\(reason)")
            let warnings = decision["figures"]?.objectValue?["healthWarnings"]?.arrayValue ?? []
            #expect(warnings.count == 1, "\(decision)")
            #expect(try await Self.outboxTypes(server).contains("rollout.held"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aRatioGuardrailRollsBackOnMoreErrorsPerRequest(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            var plan = try #require(Self.plan(steps: [50, 100]).objectValue)
            plan["guardrails"] = [
                ["event": "server_5xx", "denominatorEvent": "http_request", "kind": "ratio", "bad": "increase"]
            ]
            try await Self.started(server, .object(plan))
            let rollout = try await Self.rollout(server)
            let guardrail = rollout["guardrails"]?.arrayValue?.first?.objectValue
            #expect(guardrail?["denominatorEvent"] == "http_request", "\(rollout)")
            // 2,000 units per arm, 10 requests each: 1 % of the comparison's fail, 5 % of the treatment's.
            try await Self.sendArms(server, clock: clock, units: (2_000, 2_000), crashes: (0, 0))
            let now = Clock.rfc3339(milliseconds: Clock.milliseconds(clock.now))
            var events: [JSONValue] = []
            for index in 0..<2_000 {
                for (arm, errors) in [
                    ("treatment", index % 2 == 0 ? 1.0 : 0), ("comparison", index % 10 == 0 ? 1.0 : 0),
                ] {
                    let unit = "a-\(arm)-\(index)"
                    events.append(
                        [
                            "id": .string("r-\(unit)"), "type": "metric", "unit": .string(unit), "time": .string(now),
                            "name": "http_request", "value": 10,
                        ]
                    )
                    if errors > 0 {
                        events.append(
                            [
                                "id": .string("e-\(unit)"), "type": "metric", "unit": .string(unit),
                                "time": .string(now), "name": "server_5xx", "value": .number(JSONNumber(errors)),
                            ]
                        )
                    }
                }
            }
            for start in stride(from: 0, to: events.count, by: 1_000) {
                let batch = Array(events[start..<min(events.count, start + 1_000)])
                let reply = try await server.send(.post, Self.eventsPath, json: ["events": .array(batch)])
                #expect(reply.status == .ok, "\(reply.text.prefix(600))")
            }
            await Self.guardOf(server).pass()
            let rolledBack = try await Self.rollout(server)
            #expect(rolledBack["state"] == "rolled_back", "\(rolledBack)")
            let figure = rolledBack["decisions"]?.arrayValue?.last?.objectValue?["figures"]?.objectValue?["guardrails"]?
                .arrayValue?.first?.objectValue
            #expect(figure?["event"] == "server_5xx/http_request", "\(String(describing: figure))")
            // The server's own guard may decide while the batches arrive: on part of them.
            let treatment = figure?["treatment"]?.numberValue?.value ?? 0
            let comparison = figure?["comparison"]?.numberValue?.value ?? 1
            #expect(treatment > 0.04 && treatment < 0.06 && comparison < 0.02, "\(String(describing: figure))")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func missingExposuresHoldTheRollout(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.started(server)
            await Self.guardOf(server).pass()
            #expect(Self.actions(try await Self.rollout(server)) == ["start"], "within the hold time: waiting")
            await Self.passAfterHold(server, clock)
            let held = try await Self.rollout(server)
            #expect(Self.actions(held) == ["start", "hold"])
            #expect(
                held["decisions"]?.arrayValue?.last?.objectValue?["reason"]?.stringValue?.contains("missing exposures")
                    == true
            )
            #expect(held["step"] == 1)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func pauseResumeAndStop(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.started(server)
            let id = Self.path + "/image-cache-v2"
            #expect(try await server.send(.post, id + "/pause").object?["state"] == "paused")
            #expect(try await server.send(.post, id + "/pause").status == .preconditionFailed)
            try await Self.sendArms(server, clock: clock, units: (100, 100), crashes: (1, 1))
            await Self.passAfterHold(server, clock)
            #expect(try await Self.rollout(server)["step"] == 1, "a paused rollout does not advance")
            #expect(try await server.send(.post, id + "/resume").object?["state"] == "running")
            let stopped = try await server.send(.post, id + "/stop")
            #expect(stopped.object?["state"] == "stopped")
            let running = try await server.send(.get, ExperimentAPITests.path + "?status=running")
            #expect(running.object?["experiments"]?.arrayValue == [], "the step experiment stops with it")
            let again = try await server.send(.post, id + "/resume")
            #expect(again.status == .preconditionFailed)
            #expect(again.errorMessage?.contains("is stopped") == true, "\(again.text)")
            // The guard's own pass, woken by the events above, may come late, once the rollout
            // runs again: then it advances the step it found healthy before the stop.
            let actions = Self.actions(try await Self.rollout(server))
            #expect(Array(actions.prefix(3)) == ["start", "pause", "resume"], "\(actions)")
            #expect(actions.last == "stop", "\(actions)")
            #expect(actions.dropFirst(3).dropLast().allSatisfy { $0 == "advance" }, "\(actions)")
            // A stop leaves the current share on the new value; a roll back is refused now.
            #expect(try await server.send(.post, id + "/rollback").status == .preconditionFailed)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aPersonRollsBackARunningRollout(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.started(server, Self.plan(steps: [100]))
            #expect(try await Self.rollout(server)["state"] == "completed", "a one-step plan completes at its start")
            #expect(try await Self.fetch(server, unit: "anyone").value == "v2")
            let rollback = try await server.send(.post, Self.path + "/image-cache-v2/rollback")
            #expect(rollback.status == .preconditionFailed, "a completed rollout is final: \(rollback.text)")

            let second = Self.plan(id: "second", steps: [50, 100])
            let created = try await server.send(.post, Self.path, json: second)
            #expect(created.status == .created, "\(created.text)")
            #expect(try await server.send(.post, Self.path + "/second/start").status == .ok)
            let rolledBack = try await server.send(.post, Self.path + "/second/rollback")
            #expect(rolledBack.object?["state"] == "rolled_back", "\(rolledBack.text)")
            #expect(try await Self.rollout(server, "second")["decisions"]?.arrayValue?.count == 2)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func twoRacingGuardDecisionsDecideAStepOnce(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.started(server)
            try await Self.sendArms(server, clock: clock, units: (100, 100), crashes: (2, 2))
            let before = try await server.send(.get, TestServer.demoPath + "/template")
            let read = try await Self.stored(server)
            clock.advance(seconds: 3_601)
            let guardService = Self.guardOf(server)
            // At most one of them advances (the server's own guard service may be a third racer);
            // the others' transactions find the row moved on and are undone.
            async let first = try? guardService.decide(read)
            async let second = try? guardService.decide(read)
            let outcomes = await [first, second]
            #expect(outcomes.filter { $0 == .advance }.count <= 1, "\(outcomes)")
            let rollout = try await Self.rollout(server)
            #expect(Self.actions(rollout) == ["start", "advance"])
            #expect(rollout["step"] == 2)
            let after = try await server.send(.get, TestServer.demoPath + "/template")
            let versionBefore = Int(before.etag?.filter(\.isNumber) ?? "") ?? 0
            let versionAfter = Int(after.etag?.filter(\.isNumber) ?? "") ?? 0
            #expect(versionAfter == versionBefore + 1, "one publish: \(before.etag ?? "") → \(after.etag ?? "")")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func badPlansGetAClear400NamingTheField(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.publish(Self.template).status == .ok)
            func with(_ change: (inout JSONObject) -> Void) -> JSONValue {
                var object = Self.plan().objectValue ?? [:]
                change(&object)
                return .object(object)
            }
            let cases: [(JSONValue, String)] = [
                (with { $0["parameters"] = [["key": "no_such_key", "value": "x"]] }, "parameters[0].key"),
                (with { $0["steps"] = [10, 5, 100] }, "steps[1]"),
                (with { $0["steps"] = [10, 50] }, "steps[1]"),
                (with { $0["steps"] = [0, 100] }, "steps[0]"),
                (
                    with {
                        $0["guardrails"] = [
                            ["event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 2]
                        ]
                    }, "guardrails[0].margin"
                ),
                (
                    with { $0["guardrails"] = [["event": "app_crashed", "kind": "ratio", "bad": "increase"]] },
                    "guardrails[0].denominatorEvent"
                ),
                (
                    with { $0["guardrails"] = [["event": "app_crashed", "kind": "mean", "bad": "up"]] },
                    "guardrails[0].bad"
                ),
                (with { $0["guardrails"] = [] }, "guardrails"),
                (with { $0["audience"] = "no_such_condition" }, "audience"),
                (with { $0["minimumHoldSeconds"] = -1 }, "minimumHoldSeconds"),
                (with { $0["errorRate"] = 0.9 }, "errorRate"),
                (with { $0["id"] = "Not An Id" }, "id"),
                (with { $0["surprise"] = true }, "surprise"),
            ]
            for (body, field) in cases {
                let reply = try await server.send(.post, Self.path, json: body)
                #expect(reply.status == .badRequest, "\(field): \(reply.text)")
                #expect(reply.errorMessage?.contains(field) == true, "\(field): \(reply.errorMessage ?? reply.text)")
            }
            let wrongType: JSONValue = [
                "conditions": Self.template.objectValue?["conditions"] ?? [],
                "parameters": ["image_cache": ["defaultValue": ["value": "1"], "valueType": "NUMBER"]],
            ]
            #expect(try await server.publish(wrongType).status == .ok)
            let notANumber = try await server.send(.post, Self.path, json: Self.plan())
            #expect(notANumber.status == .badRequest, "\(notANumber.text)")
            #expect(try await server.send(.get, Self.path).object?["rollouts"]?.arrayValue == [], "nothing stored")
            #expect(try await server.send(.post, Self.path + "/nobody/start").status == .notFound)
            // The step experiments' keys are the rollouts' own.
            var experiment = ExperimentAPITests.checkout.objectValue ?? [:]
            experiment["key"] = "rollout-image-cache-v2-1"
            let taken = try await server.send(.post, ExperimentAPITests.path, json: .object(experiment))
            #expect(taken.status == .badRequest, "\(taken.text)")
            #expect(taken.errorMessage?.contains("names the steps of rollouts") == true, "\(taken.text)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anAudienceLimitsBothArmsToItsUnits(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var plan = Self.plan(steps: [100]).objectValue ?? [:]
            plan["audience"] = "ios_users"
            try await Self.started(server, .object(plan))
            let android = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                json: ["context": ["randomizationId": "u1", "device.os": "android"]]
            )
            #expect(android.object?["entries"]?.objectValue?["image_cache"] == "v1", "\(android.text)")
            let ios = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                json: ["context": ["randomizationId": "u1", "device.os": "ios"]]
            )
            #expect(ios.object?["entries"]?.objectValue?["image_cache"] == "v2", "\(ios.text)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func onlyThoseWhoMayPublishChangeRollouts(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.publish(Self.template).status == .ok)
            let client = try await server.createKey(role: "client")
            let serverKey = try await server.createKey(role: "server")
            for key in [client, serverKey] {
                #expect(try await server.send(.post, Self.path, key: key, json: Self.plan()).status == .forbidden)
                #expect(try await server.send(.get, Self.path, key: key).status == .forbidden)
            }
            #expect(try await server.send(.post, Self.path, json: Self.plan()).status == .created)
            for action in ["start", "pause", "resume", "stop", "rollback"] {
                let reply = try await server.send(.post, Self.path + "/image-cache-v2/\(action)", key: client)
                #expect(reply.status == .forbidden, "\(action): \(reply.text)")
            }
            #expect(try await server.send(.post, Self.path + "/image-cache-v2/start").status == .ok)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func underAChangePolicyARolloutStartsOnlyThroughAnApprovedRequestThenAdvancesByItself(
        database: TestDatabase
    ) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            #expect(try await server.publish(Self.template).status == .ok)
            #expect(try await server.send(.post, Self.path, json: Self.plan()).status == .created)
            try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1, "approvers": []])
            let direct = try await server.send(.post, Self.path + "/image-cache-v2/start")
            #expect(direct.status == .conflict, "\(direct.text)")
            #expect(direct.errorMessage?.contains("rollout_start") == true, "says what to open: \(direct.text)")
            #expect(try await Self.rollout(server)["state"] == "draft")

            let reviewer = try await ChangeRequestTests.reviewer(server)
            let request = try await ChangeRequestTests.open(
                server,
                ["kind": "rollout_start", "rollout": "image-cache-v2"],
                title: "roll the new image cache out"
            )
            #expect(try await ChangeRequestTests.apply(server, request.id).status != .ok, "not yet approved")
            try await ChangeRequestTests.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
            let applied = try await ChangeRequestTests.apply(server, request.id)
            #expect(applied.object?["state"] == "applied", "\(applied.text)")
            #expect(try await Self.rollout(server)["state"] == "running")

            // Approved once: the guard's next step publishes under the started rollout.
            try await Self.sendArms(server, clock: clock, units: (100, 100), crashes: (2, 2))
            await Self.passAfterHold(server, clock)
            let advanced = try await Self.rollout(server)
            #expect(advanced["step"] == 2, "\(advanced)")
            // Other direct publishes are still refused.
            let publish = try await server.publish(Self.template)
            #expect(publish.status == .conflict)
        }
    }

    /// An endpoint (that nothing answers) for every rollout event, so the outbox keeps them.
    static func subscribe(_ server: TestServer) async throws {
        let events: [JSONValue] = WebhookEventType.allCases.map(\.rawValue).filter { $0.hasPrefix("rollout.") }.map {
            .string($0)
        }
        let created = try await server.send(
            .post,
            WebhookAPITests.path,
            json: ["url": .string(WebhookAPITests.deadURL), "events": .array(events)]
        )
        #expect(created.status == .created, "\(created.text)")
    }

    /// The webhook outbox's message types, oldest first.
    static func outboxTypes(_ server: TestServer) async throws -> [String] {
        try await server.application.store.engine.withSession { database in
            try await database.raw("SELECT payload FROM webhook_messages ORDER BY create_time").all().map {
                let payload = try $0.decode(column: "payload", as: String.self)
                return (try? JSONValue.parse(payload))?.objectValue?["type"]?.stringValue ?? ""
            }
        }
    }
}

extension Range where Element == Int {
    /// The first element that passes `test`, asked in order.
    fileprivate func asyncFirst(_ test: (Int) async throws -> Bool) async rethrows -> Int? {
        for element in self {
            if try await test(element) { return element }
        }
        return nil
    }
}
