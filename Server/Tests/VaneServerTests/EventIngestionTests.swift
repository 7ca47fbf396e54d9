import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/events` (issue #15): exposures and metric events stored once per id, bad events
/// reported one by one while the good ones are kept, on both databases.
@Suite(.timeLimit(.minutes(5))) struct EventIngestionTests {
    static let path = TestServer.demoPath + "/events"

    static func time(offsetSeconds: Double = 0) -> String {
        Clock.rfc3339(milliseconds: Clock.nowMilliseconds() + Int64(offsetSeconds * 1_000))
    }

    static func exposure(_ id: String, unit: String = "user-1", variant: String = "new-flow") -> JSONValue {
        [
            "id": .string(id), "type": "exposure", "time": .string(time()), "unit": .string(unit),
            "experiment": "checkout-button", "variant": .string(variant), "flagKey": "checkout_variant",
            "templateVersion": "1",
        ]
    }

    static func metric(_ id: String, unit: String = "user-1", value: Double = 39.9) -> JSONValue {
        [
            "id": .string(id), "type": "metric", "time": .string(time()), "unit": .string(unit),
            "name": "checkout_completed", "value": .number(JSONNumber(value)), "properties": ["currency": "EUR"],
        ]
    }

    /// Creates and starts the demo's checkout experiment, recorded as started `startedAgo`
    /// seconds ago: the tests send exposures from up to two hours back, and exposures from before
    /// an experiment's start do not count.
    static func startExperiment(_ server: TestServer, startedAgo: Int64 = 3 * 3_600) async throws {
        let created = try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout)
        #expect(created.status == .created, "\(created.text)")
        let started = try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start")
        #expect(started.status == .ok, "\(started.text)")
        try await backdateStart(server, key: "checkout-button", seconds: startedAgo)
    }

    /// Records a demo experiment as started `seconds` ago, as if it had run since. Call it right
    /// after the start and before any event: the start empties the node's list of running
    /// experiments, so the next batch reads the changed time.
    static func backdateStart(_ server: TestServer, key: String, seconds: Int64) async throws {
        guard seconds > 0 else { return }
        let time = Clock.nowMilliseconds() - seconds * 1_000
        try await server.application.store.engine.withSession { database in
            try await database.raw(
                """
                UPDATE experiments SET start_time = \(bind: time) WHERE project_id = 'demo' \
                AND environment_id = 'production' AND experiment_key = \(bind: key)
                """
            ).run()
        }
    }

    static func counts(_ server: TestServer, _ database: TestDatabase) async throws -> [String: Int] {
        try await ExperimentEventStore(engine: server.application.store.engine).counts(
            EnvironmentKey(projectId: "demo", environmentId: "production")
        )
    }

    @Test(arguments: TestDatabase.allCases)
    func aBatchIsStoredOnceAndAReplayChangesNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.startExperiment(server)
            let client = try await server.createKey(role: "client")
            let batch: JSONValue = [
                "events": [
                    Self.exposure("e1"), Self.metric("e2"), Self.exposure("e3", unit: "user-2", variant: "control"),
                ]
            ]
            let first = try await server.send(.post, Self.path, key: client, json: batch)
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.object?["accepted"] == 3)
            #expect(first.object?["duplicates"] == 0)
            #expect(first.object?["rejected"]?.arrayValue == [])

            // The SDK retries after a timeout: the same ids again, plus one new event.
            let replay: JSONValue = [
                "events": [
                    Self.exposure("e1"), Self.metric("e2"), Self.exposure("e3", unit: "user-2", variant: "control"),
                    Self.metric("e4", unit: "user-2", value: 10),
                ]
            ]
            let second = try await server.send(.post, Self.path, key: client, json: replay)
            #expect(second.object?["accepted"] == 1)
            #expect(second.object?["duplicates"] == 3)
            #expect(try await Self.counts(server, database) == ["exposure": 2, "metric": 2])

            // The same id twice in one batch is one event too.
            let twice: JSONValue = ["events": [Self.metric("e5"), Self.metric("e5")]]
            let repeated = try await server.send(.post, Self.path, key: client, json: twice)
            #expect(repeated.object?["accepted"] == 1)
            #expect(repeated.object?["duplicates"] == 1, "every event sent is counted once: \(repeated.text)")
            #expect(try await Self.counts(server, database) == ["exposure": 2, "metric": 3])
        }
    }

    /// A batch reaches the database as one JSON array: units and properties with quotes,
    /// backslashes and text beyond ASCII, and values with no short binary form, come back from
    /// the export exactly as sent, and the results count the unit.
    @Test(arguments: TestDatabase.allCases)
    func eventsComeBackFromTheExportExactlyAsSent(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.startExperiment(server)
            let unit = "user \"7\" \\ Zoë 🚀"
            let properties: JSONObject = ["note": "say \"hi\" \\ ✓\n\tbye", "currency": "EUR", "items": 3]
            let events: [JSONValue] = [
                Self.exposure("x-1", unit: unit),
                [
                    "id": "m-1", "type": "metric", "time": .string(Self.time()), "unit": .string(unit),
                    "name": "checkout_completed", "value": .number(JSONNumber(0.1 + 0.2)),
                    "properties": .object(properties),
                ],
                [
                    "id": "m-2", "type": "metric", "time": .string(Self.time()), "unit": .string(unit),
                    "name": "checkout_completed", "value": .number(JSONNumber(-1.25e-7)),
                ],
            ]
            let reply = try await server.send(.post, Self.path, json: ["events": .array(events)])
            #expect(reply.object?["accepted"] == 3, "\(reply.text)")

            let export = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events")
            let lines = export.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue }
            #expect(lines.map { $0["id"] } == ["m-1", "m-2", "x-1"], "one batch: by id")
            #expect(lines.allSatisfy { $0["unit"] == .string(unit) }, "\(export.text)")
            #expect(lines.first?["value"]?.numberValue?.value == 0.1 + 0.2)
            #expect(lines.first?["properties"] == .object(properties))
            #expect(lines.dropFirst().first?["value"]?.numberValue?.value == -1.25e-7)
            #expect(lines.last?["experiment"] == "checkout-button")
            #expect(lines.last?["templateVersion"] == "1")

            let results = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/results")
            #expect(results.text.contains("\"exposedUnits\":1"), "\(results.text.prefix(600))")
        }
    }

    /// PostgreSQL plans each batch's unit lookups from column statistics, which a new database
    /// lacks until autovacuum's first run, a minute or more later; without them it read every
    /// event of the environment per batch. The first batch a node stores gathers them.
    @Test(.needsPostgreSQL) func theFirstBatchGivesPostgreSQLTheStatisticsItPlansWith() async throws {
        try await TestServer.run(.postgres) { server in
            try await Self.startExperiment(server)
            let engine = server.application.store.engine
            let statistics: @Sendable () async throws -> Int = {
                try await engine.withSession { database in
                    try await database.raw(
                        """
                        SELECT count(*) AS n FROM pg_stats WHERE attname = 'unit_id' \
                        AND tablename IN ('experiment_events', 'experiment_units')
                        """
                    ).first()?.decode(column: "n", as: Int.self) ?? 0
                }
            }
            #expect(try await statistics() == 0, "a new database has none")
            let reply = try await server.send(
                .post,
                Self.path,
                json: ["events": [Self.exposure("e1"), Self.metric("e2")]]
            )
            #expect(reply.object?["accepted"] == 2, "\(reply.text)")
            #expect(try await statistics() == 2)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func badEventsAreReportedByPathAndTheGoodOnesKept(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.startExperiment(server)
            var future = Self.metric("future").objectValue ?? [:]
            future["time"] = .string(Self.time(offsetSeconds: 3_600))
            var old = Self.metric("old").objectValue ?? [:]
            old["time"] = .string(Self.time(offsetSeconds: -40 * 86_400))
            var badValue = Self.metric("nan").objectValue ?? [:]
            badValue["value"] = "lots"
            var badProperty = Self.metric("prop").objectValue ?? [:]
            badProperty["properties"] = ["cart": ["items": 3]]
            let batch: JSONValue = [
                "events": [
                    Self.metric("good-1"),
                    .object(future),
                    .object(old),
                    .object(badValue),
                    .object(badProperty),
                    ["id": "no-type", "time": .string(Self.time()), "unit": "u"],
                    Self.exposure("other-variant", variant: "purple"),
                    ["id": "x y", "type": "metric", "time": .string(Self.time()), "unit": "u", "name": "n"],
                    Self.exposure("good-2"),
                    "not an event",
                ]
            ]
            let reply = try await server.send(.post, Self.path, json: batch)
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(reply.object?["accepted"] == 2)
            let rejected = (reply.object?["rejected"]?.arrayValue ?? []).compactMap { item -> String? in
                guard let object = item.objectValue else { return nil }
                return "\(object["path"]?.stringValue ?? "?") \(object["rule"]?.stringValue ?? "?")"
            }
            #expect(
                rejected == [
                    "events[1].time clock-skew", "events[2].time too-old", "events[3].value type",
                    "events[4].properties.cart type", "events[5].type enum", "events[6].variant unknown-variant",
                    "events[7].id required", "events[9] type",
                ],
                "\(reply.text)"
            )
            #expect(try await Self.counts(server, database) == ["exposure": 1, "metric": 1])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func exposuresCountOnlyForRunningExperiments(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let draft = try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout)
            #expect(draft.status == .created)
            let reply = try await server.send(.post, Self.path, json: ["events": [Self.exposure("early")]])
            let message = reply.object?["rejected"]?.arrayValue?.first?.objectValue?["message"]?.stringValue
            #expect(
                message
                    == "experiment \"checkout-button\" is not running in demo/production; exposures count only while it runs"
            )
            #expect(reply.object?["accepted"] == 0)
        }
    }

    @Test func batchesThatAreNotBatchesAreRefusedWhole() async throws {
        try await TestServer.run(.sqlite) { server in
            #expect(try await server.send(.post, Self.path, text: "[1, 2").status == .badRequest)
            let noEvents = try await server.send(.post, Self.path, json: ["evnts": []])
            #expect(noEvents.status == .badRequest)
            #expect(noEvents.errorMessage == "required: an array of events")
            let tooMany = JSONValue.object(["events": .array((0..<1_001).map { Self.metric("m\($0)") })])
            let refused = try await server.send(.post, Self.path, json: tooMany)
            #expect(refused.status == .badRequest)
            #expect(refused.errorMessage == "1001 events in one batch; send at most 1000 per request")
            let huge = "{\"events\": [\"" + String(repeating: "x", count: 1 << 20) + "\"]}"
            #expect(try await server.send(.post, Self.path, text: huge).status == .contentTooLarge)
            // A key of another environment may not send here.
            let qa = try await server.send(
                .post,
                "/v1/projects/demo/environments",
                json: ["id": "qa"]
            )
            #expect(qa.status == .created, "\(qa.text)")
            let qaKey = try await server.createKey(role: "client", environment: "qa")
            let other = try await server.send(.post, Self.path, key: qaKey, json: ["events": []])
            #expect(other.status == .forbidden)
            #expect(try await Self.counts(server, .sqlite).isEmpty)
        }
    }
}
