import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer

/// What fetch tells apps about running experiments (issue #15): for each key an experiment
/// controls, the variant the app's value is, named, never its conditions; nothing while the
/// experiment is a draft or stopped; the ETag changes with a start and a stop.
@Suite(.timeLimit(.minutes(5))) struct FetchExperimentTests {
    static let fetchPath = TestServer.demoPath + "/fetch"

    /// The demo's `checkout_variant` for `unit`, its metadata, and the response's ETag.
    static func fetch(
        _ server: TestServer,
        key: String,
        unit: String,
        ifNoneMatch: String? = nil
    ) async throws -> (reply: TestServer.Reply, value: String?, metadata: JSONObject?) {
        var headers = HTTPFields()
        if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
        let reply = try await server.send(
            .post,
            fetchPath,
            key: key,
            json: ["context": ["randomizationId": .string(unit)]],
            headers: headers
        )
        let value = reply.object?["entries"]?.objectValue?["checkout_variant"]?.stringValue
        let metadata = reply.object?["metadata"]?.objectValue?["checkout_variant"]?.objectValue
        return (reply, value, metadata)
    }

    @Test(arguments: TestDatabase.allCases)
    func fetchNamesTheVariantOnlyWhileTheExperimentRuns(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let created = try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout)
            #expect(created.status == .created, "\(created.text)")

            // A draft changes nothing: no experiment in the metadata.
            let units = (0..<16).map { "user-\($0)" }
            var etags: [String: String] = [:]
            for unit in units {
                let draft = try await Self.fetch(server, key: key, unit: unit)
                #expect(draft.reply.status == .ok)
                #expect(draft.metadata?["experiment"] == nil, "a draft is not announced: \(draft.reply.text)")
                #expect(draft.metadata?["title"] == "Checkout experiment", "the declared metadata stays")
                etags[unit] = draft.reply.headers[.eTag]
            }

            let started = try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start")
            #expect(started.status == .ok, "\(started.text)")
            var seen: Set<String> = []
            for unit in units {
                // The ETag from before the start no longer holds: the same values, new metadata.
                let running = try await Self.fetch(server, key: key, unit: unit, ifNoneMatch: etags[unit])
                #expect(running.reply.status == .ok, "a start must reach clients that poll with an ETag")
                let assignment = try #require(running.metadata?["experiment"]?.objectValue, "\(running.reply.text)")
                #expect(assignment["key"] == "checkout-button")
                // The demo's split: `checkout_test_b` gives "one_page" (variant new-flow), the
                // default "control" (variant control).
                let expected = running.value == "one_page" ? "new-flow" : "control"
                #expect(assignment["variant"]?.stringValue == expected, "\(running.reply.text)")
                #expect(assignment.count == 2, "the variant's name only, never its condition")
                #expect(running.metadata?["title"] == "Checkout experiment")
                seen.insert(expected)
                let others = running.reply.object?["metadata"]?.objectValue ?? [:]
                for member in others where member.key != "checkout_variant" {
                    #expect(member.value.objectValue?["experiment"] == nil, "\(member.key) is in no experiment")
                }
                // And the new ETag holds until something changes.
                let again = try await Self.fetch(
                    server,
                    key: key,
                    unit: unit,
                    ifNoneMatch: running.reply.headers[.eTag]
                )
                #expect(again.reply.status == .notModified)
                etags[unit] = running.reply.headers[.eTag]
            }
            #expect(seen == ["control", "new-flow"], "16 units fall in both halves of the split")

            let stopped = try await server.send(.post, ExperimentAPITests.path + "/checkout-button/stop")
            #expect(stopped.status == .ok, "\(stopped.text)")
            for unit in units.prefix(4) {
                let after = try await Self.fetch(server, key: key, unit: unit, ifNoneMatch: etags[unit])
                #expect(after.reply.status == .ok, "a stop must reach clients too")
                #expect(after.metadata?["experiment"] == nil, "\(after.reply.text)")
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aPublishDuringTheExperimentKeepsItsVariantsAndTargetingFirstIsNoVariant(
        database: TestDatabase
    ) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            #expect(
                try await server.publish([
                    "conditions": [
                        ["name": "testers", "expression": "device.country in ['xx']"],
                        ["name": "checkout_test_b", "expression": "percent('checkout_test') between 50 and 100"],
                    ],
                    "parameters": [
                        "checkout_variant": [
                            "defaultValue": ["useInAppDefault": true],
                            "conditionalValues": [
                                "testers": ["value": "one_page"], "checkout_test_b": ["value": "one_page"],
                            ],
                        ]
                    ],
                ]).status == .ok
            )
            let created = try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout)
            #expect(created.status == .created, "\(created.text)")
            let started = try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start")
            #expect(started.status == .ok, "\(started.text)")

            var variants: [String: Int] = [:]
            for index in 0..<16 {
                let fetched = try await Self.fetch(server, key: key, unit: "unit-\(index)")
                let variant = try #require(fetched.metadata?["experiment"]?.objectValue?["variant"]?.stringValue)
                variants[variant, default: 0] += 1
                if variant == "control" {
                    // Control keeps the app's own value: no entry, but the app learns its variant.
                    #expect(fetched.value == nil, "\(fetched.reply.text)")
                } else {
                    #expect(fetched.value == "one_page")
                }
            }
            #expect(variants.keys.sorted() == ["control", "new-flow"])

            // A tester (country "xx") gets "one_page" from the targeting rule before the split: no variant.
            let tester = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["randomizationId": "unit-0", "device.country": "xx"]]
            )
            #expect(tester.object?["entries"]?.objectValue?["checkout_variant"] == "one_page")
            #expect(
                tester.object?["metadata"]?.objectValue?["checkout_variant"] == nil,
                "a value a targeting rule decided is no variant: \(tester.text)"
            )
        }
    }
}
