import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer

/// The experiments API (issue #15): create, list, read, start and stop, on both databases.
@Suite(.timeLimit(.minutes(5))) struct ExperimentAPITests {
    static let path = TestServer.demoPath + "/experiments"

    /// A checkout-button test on the demo template's `checkout_variant` parameter, split by its
    /// `checkout_test_b` percent condition.
    static let checkout: JSONValue = [
        "key": "checkout-button",
        "hypothesis": "The new checkout raises completed checkouts",
        "parameters": ["checkout_variant"],
        "variants": [
            ["name": "control", "weight": 50],
            ["name": "new-flow", "condition": "checkout_test_b", "weight": 50],
        ],
        "primaryMetric": ["event": "checkout_completed", "kind": "conversion"],
        "guardrailMetrics": [
            ["event": "revenue", "kind": "mean"],
            ["event": "revenue", "kind": "ratio", "denominatorEvent": "session_started"],
        ],
    ]

    @Test(arguments: TestDatabase.allCases)
    func anExperimentIsCreatedStartedAndStoppedAndEachStepIsAudited(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let created = try await server.send(.post, Self.path, json: Self.checkout)
            #expect(created.status == .created, "\(created.text)")
            let experiment = try #require(created.object)
            #expect(experiment["status"] == "draft")
            #expect(experiment["controlVariant"] == "control", "the variant without a condition is control")
            #expect(experiment["method"] == "sequential", "always-valid statistics unless chosen otherwise")
            #expect(experiment["unit"] == "randomizationId")
            #expect(experiment["createdBy"] == "admin (--admin-key)")
            let metrics = experiment["guardrailMetrics"]?.arrayValue?.compactMap {
                $0.objectValue?["name"]?.stringValue
            }
            #expect(metrics == ["revenue", "revenue/session_started"], "a metric is named after its events")
            #expect(experiment["startTime"] == nil)

            let again = try await server.send(.post, Self.path, json: Self.checkout)
            #expect(again.status == .conflict)
            #expect(again.errorMessage?.contains("already exists") == true)

            let started = try await server.send(.post, Self.path + "/checkout-button/start")
            #expect(started.status == .ok, "\(started.text)")
            #expect(started.object?["status"] == "running")
            #expect(started.object?["startVersion"] == "1", "the live version it started on")
            #expect(started.object?["startTime"]?.stringValue?.hasPrefix("20") == true)

            let twice = try await server.send(.post, Self.path + "/checkout-button/start")
            #expect(twice.status == .preconditionFailed)
            #expect(twice.errorMessage?.contains("is running") == true, "\(twice.text)")

            let running = try await server.send(.get, Self.path + "?status=running")
            #expect(running.object?["experiments"]?.arrayValue?.count == 1)
            #expect(try await server.send(.get, Self.path + "?status=draft").object?["experiments"]?.arrayValue == [])

            let stopped = try await server.send(.post, Self.path + "/checkout-button/stop")
            #expect(stopped.object?["status"] == "stopped")
            #expect(stopped.object?["stopTime"] != nil)
            let restart = try await server.send(.post, Self.path + "/checkout-button/start")
            #expect(restart.status == .preconditionFailed)
            #expect(restart.errorMessage?.contains("create a new experiment") == true, "\(restart.text)")

            let read = try await server.send(.get, Self.path + "/checkout-button")
            #expect(read.object?["status"] == "stopped")
            #expect(read.object?["hypothesis"] == "The new checkout raises completed checkouts")

            let audit = try await server.send(.get, TestServer.demoPath + "/audit?action=experiment.create")
            #expect(audit.object?["entries"]?.arrayValue?.count == 1, "\(audit.text)")
            for action in ["experiment.start", "experiment.stop"] {
                let entries = try await server.send(.get, TestServer.demoPath + "/audit?action=\(action)")
                #expect(entries.object?["entries"]?.arrayValue?.count == 1, "\(action): \(entries.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func badDefinitionsListEveryProblemAtItsPathAndStoreNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let bad: JSONValue = [
                "key": "Checkout Test",
                "parameters": ["checkout_variant", "checkout_variant"],
                "variants": [
                    ["name": "control", "weight": 50],
                    ["name": "control", "condition": "checkout_test_b", "weight": 0],
                ],
                "primaryMetric": ["event": "checkout completed", "kind": "sum"],
                "method": "frequentist",
                "owner": "me",
            ]
            let reply = try await server.send(.post, Self.path, json: bad)
            #expect(reply.status == .badRequest)
            let paths = Set(
                reply.object?["error"]?.objectValue?["details"]?.arrayValue?.compactMap {
                    $0.objectValue?["path"]?.stringValue
                } ?? []
            )
            for expected in [
                "key", "parameters[1]", "variants[1].name", "variants[1].weight", "primaryMetric.event",
                "primaryMetric.kind", "method", "owner",
            ] {
                #expect(paths.contains(expected), "no problem reported at \(expected): \(reply.text)")
            }
            #expect(reply.errorMessage?.contains("problems; the first") == true, "\(reply.text)")

            // Valid JSON, but not for this template: a parameter and a condition it does not have,
            // and a condition that none of the experiment's parameters uses.
            let unknown: JSONValue = [
                "key": "nowhere",
                "parameters": ["no_such_flag", "banner_text"],
                "variants": [
                    ["name": "control", "weight": 1],
                    ["name": "b", "condition": "no_such_condition", "weight": 1],
                    ["name": "c", "condition": "checkout_test_b", "weight": 1],
                ],
                "primaryMetric": ["event": "checkout_completed", "kind": "conversion"],
            ]
            let refused = try await server.send(.post, Self.path, json: unknown)
            #expect(refused.status == .badRequest)
            let details = refused.object?["error"]?.objectValue?["details"]?.arrayValue ?? []
            let rules = details.compactMap { detail -> String? in
                guard let object = detail.objectValue else { return nil }
                return "\(object["path"]?.stringValue ?? "?") \(object["rule"]?.stringValue ?? "?")"
            }
            #expect(
                rules == [
                    "parameters[0] unknown-parameter", "variants[1].condition unknown-condition",
                    "variants[2].condition unused-condition",
                ],
                "\(refused.text)"
            )

            let listed = try await server.send(.get, Self.path)
            #expect(listed.object?["experiments"]?.arrayValue == [], "nothing was stored")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aParameterIsTestedByOneRunningExperimentAtATime(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var second = Self.checkout.objectValue ?? [:]
            second["key"] = "checkout-again"
            #expect(try await server.send(.post, Self.path, json: Self.checkout).status == .created)
            #expect(try await server.send(.post, Self.path, json: .object(second)).status == .created)
            #expect(try await server.send(.post, Self.path + "/checkout-button/start").status == .ok)
            let clash = try await server.send(.post, Self.path + "/checkout-again/start")
            #expect(clash.status == .preconditionFailed)
            #expect(
                clash.errorMessage
                    == "parameter \"checkout_variant\" is already tested by running experiment \"checkout-button\"; stop that experiment first, or test another parameter"
            )
            #expect(try await server.send(.post, Self.path + "/checkout-button/stop").status == .ok)
            #expect(try await server.send(.post, Self.path + "/checkout-again/start").status == .ok)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func startingChecksTheTemplateAsItIsThen(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.send(.post, Self.path, json: Self.checkout).status == .created)
            // The condition is gone from the live template by the time the experiment starts.
            try await server.publish(["parameters": ["checkout_variant": ["defaultValue": ["value": "classic"]]]])
            let refused = try await server.send(.post, Self.path + "/checkout-button/start")
            #expect(refused.status == .preconditionFailed)
            #expect(refused.errorMessage?.contains("cannot start on the live template") == true, "\(refused.text)")
            #expect(refused.errorMessage?.contains("version 2") == true, "\(refused.text)")
            #expect(try await server.send(.get, Self.path + "/checkout-button").object?["status"] == "draft")
        }
    }

    /// A variant's units must be a random sample: a condition that targets a kind of user
    /// (germany_austria tests device.country) would measure that kind, not the change.
    @Test(arguments: TestDatabase.allCases)
    func aVariantWhoseConditionIsNotARandomSplitIsRefused(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let targeted: JSONValue = [
                "key": "banner-test",
                "parameters": ["banner_text"],
                "variants": [
                    ["name": "control", "weight": 1],
                    ["name": "german", "condition": "germany_austria", "weight": 1],
                ],
                "primaryMetric": ["event": "banner_clicked", "kind": "conversion"],
            ]
            let refused = try await server.send(.post, Self.path, json: targeted)
            #expect(refused.status == .badRequest)
            let detail = try #require(refused.object?["error"]?.objectValue?["details"]?.arrayValue?.first?.objectValue)
            #expect(detail["path"] == "variants[1].condition")
            #expect(detail["rule"] == "not-random-split")
            #expect(
                refused.errorMessage
                    == "the experiment is not valid: 1 problem; the first: variants[1].condition: variant \"german\": "
                    + "condition \"germany_austria\" tests device.country, a targeting rule, not a random split; a "
                    + "variant's condition may have only percent rules, such as percent('banner-test') between 0 and 50",
                "\(refused.text)"
            )
            #expect(try await server.send(.get, Self.path).object?["experiments"]?.arrayValue == [], "nothing stored")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func keysOfOtherRolesAndMissingThingsAreRefusedClearly(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let client = try await server.createKey(role: "client")
            let serverKey = try await server.createKey(role: "server")
            for key in [client, serverKey] {
                #expect(try await server.send(.post, Self.path, key: key, json: Self.checkout).status == .forbidden)
                #expect(try await server.send(.get, Self.path, key: key).status == .forbidden)
            }
            let missing = try await server.send(.get, Self.path + "/nope")
            #expect(missing.status == .notFound)
            #expect(missing.errorMessage?.contains("no experiment \"nope\"") == true)
            let noEnvironment = try await server.send(.get, "/v1/projects/demo/environments/nowhere/experiments")
            #expect(noEnvironment.status == .notFound)
            #expect(noEnvironment.errorMessage?.contains("no environment \"nowhere\"") == true)
            let badStatus = try await server.send(.get, Self.path + "?status=paused")
            #expect(badStatus.status == .badRequest)
            let notJSON = try await server.send(.post, Self.path, text: "{\"key\": ")
            #expect(notJSON.status == .badRequest)
        }
    }
}
