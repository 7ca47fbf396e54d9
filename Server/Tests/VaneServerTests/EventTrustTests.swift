import Foundation
import HTTPTypes
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/events` and the export against hostile and careless senders (issue #27): one request's
/// events never fail another's, every text is bounded and printable, metric events no experiment
/// reads are not stored, a daily quota and a rate budget of their own, exposures from before the
/// start, repeated ids, and an export that holds exactly the experiment's events; on both
/// databases.
@Suite(.timeLimit(.minutes(5))) struct EventTrustTests {
    static let path = EventIngestionTests.path

    /// An event of `type` at `offset` seconds from now, with `members` added.
    static func event(
        _ id: String,
        _ type: String,
        unit: String,
        at offset: Double = 0,
        _ members: JSONObject
    ) -> JSONValue {
        var object: JSONObject = [
            "id": .string(id), "type": .string(type), "unit": .string(unit),
            "time": .string(EventIngestionTests.time(offsetSeconds: offset)),
        ]
        for member in members { object[member.key] = member.value }
        return .object(object)
    }

    static func checkout(_ id: String, unit: String, at offset: Double = 0) -> JSONValue {
        event(id, "metric", unit: unit, at: offset, ["name": "checkout_completed"])
    }

    static func exposure(
        _ id: String,
        unit: String,
        experiment: String = "checkout-button",
        variant: String = "control",
        at offset: Double = 0
    ) -> JSONValue {
        event(id, "exposure", unit: unit, at: offset, ["experiment": .string(experiment), "variant": .string(variant)])
    }

    /// "path rule" of each rejection of a reply.
    static func rejections(_ reply: TestServer.Reply) -> [String] {
        (reply.object?["rejected"]?.arrayValue ?? []).compactMap { item in
            guard let object = item.objectValue else { return nil }
            return "\(object["path"]?.stringValue ?? "?") \(object["rule"]?.stringValue ?? "?")"
        }
    }

    /// The ids of an experiment's export, in its order.
    static func exportedIds(_ server: TestServer, _ experiment: String) async throws -> [String] {
        let export = try await server.send(.get, ExperimentAPITests.path + "/\(experiment)/events")
        #expect(export.status == .ok, "\(export.text)")
        return export.text.split(separator: "\n").compactMap {
            try? JSONValue.parse(String($0)).objectValue?["id"]?.stringValue
        }
    }

    /// A POST on a connection of its own, so requests run at once (the test client sends one at a
    /// time on one connection): the status and the body.
    static func post(_ server: TestServer, _ path: String, json: JSONValue) async throws -> (status: Int, body: String)
    {
        let socket = try RawSocket(port: try #require(server.client.port))
        let body = json.serialized()
        try socket.send(
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestServer.adminKey)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body
        )
        // Read until the server closes the connection (the bound is only a safety net).
        let response = await socket.read(timeout: 120) { _ in false }
        let status = Int(response.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0
        let text = response.range(of: "\r\n\r\n").map { String(response[$0.upperBound...]) } ?? ""
        return (status, text)
    }

    /// Makes the database refuse every event whose unit starts with `prefix`, as a constraint an
    /// operator added, a full disk or a bug would: a failure no check before the insert foresees.
    static func refuseUnits(startingWith prefix: String, _ server: TestServer, _ database: TestDatabase) async throws {
        try await server.application.store.engine.withSession { connection in
            switch database {
            case .sqlite:
                try await connection.raw(
                    """
                    CREATE TRIGGER refuse_units BEFORE INSERT ON experiment_events \
                    WHEN NEW.unit_id LIKE '\(unsafeRaw: prefix)%' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                    """
                ).run()
            case .postgres:
                try await connection.raw(
                    """
                    CREATE FUNCTION refuse_units() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                    IF NEW.unit_id LIKE '\(unsafeRaw: prefix)%' THEN RAISE EXCEPTION 'refused by the test'; END IF; \
                    RETURN NEW; END $$
                    """
                ).run()
                try await connection.raw(
                    """
                    CREATE TRIGGER refuse_units BEFORE INSERT ON experiment_events \
                    FOR EACH ROW EXECUTE FUNCTION refuse_units()
                    """
                ).run()
            }
        }
    }

    /// Batches that share a group commit: good ones, ones with a NUL in a unit (which PostgreSQL
    /// cannot store) and ones the database refuses. Every good batch is stored and answered 200,
    /// the NUL batches lose only their bad event, and only the refused batches fail.
    @Test(arguments: TestDatabase.allCases)
    func aBatchTheDatabaseRefusesFailsNoOtherRequest(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.refuseUnits(startingWith: "poison", server, database)
            enum Kind: Sendable { case good, nul, refused }
            let kinds: [Kind] = (0..<36).map { [.refused, .nul, .good, .good][$0 % 4] }
            @Sendable func batch(_ number: Int, _ kind: Kind) -> JSONValue {
                var events: [JSONValue] = []
                for unit in 0..<25 {
                    let name = "b\(number)-u\(unit)"
                    events.append(
                        Self.exposure("x-\(name)", unit: name, variant: unit % 2 == 0 ? "control" : "new-flow")
                    )
                    events.append(Self.checkout("m-\(name)", unit: name))
                }
                switch kind {
                case .good: break
                case .nul: events[0] = Self.exposure("x-b\(number)-nul", unit: "user\u{0}\(number)")
                case .refused: events[0] = Self.exposure("x-b\(number)-poison", unit: "poison-\(number)")
                }
                return ["events": .array(events)]
            }
            let replies = try await withThrowingTaskGroup(of: (Int, Int, String).self) { group in
                for (number, kind) in kinds.enumerated() {
                    group.addTask {
                        let reply = try await Self.post(server, Self.path, json: batch(number, kind))
                        return (number, reply.status, reply.body)
                    }
                }
                var replies: [Int: (status: Int, body: String)] = [:]
                for try await (number, status, body) in group { replies[number] = (status, body) }
                return replies
            }
            var stored = 0
            for (number, kind) in kinds.enumerated() {
                let reply = try #require(replies[number])
                let object = try? JSONValue.parse(reply.body).objectValue
                switch kind {
                case .good:
                    #expect(reply.status == 200, "batch \(number): \(reply.body)")
                    #expect(object?["accepted"] == 50, "batch \(number): \(reply.body)")
                    stored += 50
                case .nul:
                    #expect(reply.status == 200, "batch \(number): \(reply.body)")
                    #expect(object?["accepted"] == 49, "batch \(number): \(reply.body)")
                    let rejected = object?["rejected"]?.arrayValue?.first?.objectValue
                    #expect(rejected?["path"] == "events[0].unit" && rejected?["rule"] == "control-character")
                    stored += 49
                case .refused:
                    #expect(reply.status == 500, "batch \(number): \(reply.body)")
                }
            }
            let counts = try await EventIngestionTests.counts(server, database)
            #expect(counts.values.reduce(0, +) == stored, "\(counts)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func textIsBoundedAndPrintableAndReportedByPath(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            func checkout(_ id: String, properties: JSONObject) -> JSONValue {
                Self.event(id, "metric", unit: "u1", ["name": "checkout_completed", "properties": .object(properties)])
            }
            var many: JSONObject = [:]
            for index in 0..<21 { many["p\(index)"] = 1 }
            let long = String(repeating: "x", count: 257)
            let batch: JSONValue = [
                "events": [
                    checkout("long-name", properties: [String(repeating: "p", count: 100_000): "x"]),
                    checkout("empty-name", properties: ["": "x"]),
                    checkout("long-value", properties: ["note": .string(long)]),
                    checkout("many", properties: many),
                    Self.checkout("long-unit", unit: long),
                    Self.checkout("nul-unit", unit: "user\u{0}1"),
                    Self.checkout("c1-unit", unit: "user\u{85}1"),
                    Self.event(
                        "escape-flag",
                        "exposure",
                        unit: "u2",
                        ["experiment": "checkout-button", "variant": "control", "flagKey": "checkout\u{1B}[31m"]
                    ),
                    checkout("bell-name", properties: ["bell\u{7}": 1]),
                    checkout("nul-value", properties: ["note": "a\u{0}b"]),
                    checkout("good", properties: ["note": "two\nlines", String(repeating: "n", count: 100): "ok"]),
                ]
            ]
            let reply = try await server.send(.post, Self.path, json: batch)
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(
                Self.rejections(reply) == [
                    "events[0].properties property-name", "events[1].properties property-name",
                    "events[2].properties.note type", "events[3].properties count", "events[4].unit required",
                    "events[5].unit control-character", "events[6].unit control-character",
                    "events[7].flagKey control-character", "events[8].properties control-character",
                    "events[9].properties.note control-character",
                ],
                "\(reply.text.prefix(2_000))"
            )
            #expect(reply.object?["accepted"] == 1)
            #expect(
                reply.object?["rejected"]?.arrayValue?.first?.objectValue?["message"]
                    == "property names must be 1-100 characters; found one of 100000"
            )
            #expect(try await EventIngestionTests.counts(server, database) == ["metric": 1])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func metricEventsNoRunningExperimentReadsAreIgnoredAndNotStored(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let nothingRuns = try await server.send(
                .post,
                Self.path,
                json: [
                    "events": [
                        Self.checkout("m1", unit: "u1"),
                        Self.event("m2", "metric", unit: "u1", ["name": "screen_viewed"]),
                    ]
                ]
            )
            #expect(nothingRuns.status == .ok, "\(nothingRuns.text)")
            #expect(nothingRuns.object?["accepted"] == 0)
            #expect(nothingRuns.object?["ignored"] == 2, "\(nothingRuns.text)")
            #expect(nothingRuns.object?["duplicates"] == 0)
            #expect(try await EventIngestionTests.counts(server, database).isEmpty)

            try await EventIngestionTests.startExperiment(server)
            let reply = try await server.send(
                .post,
                Self.path,
                json: [
                    "events": [
                        Self.checkout("m1", unit: "u1"),
                        Self.event("m2", "metric", unit: "u1", ["name": "screen_viewed"]),
                        Self.exposure("x1", unit: "u1"),
                        Self.exposure("x2", unit: "u2", variant: "purple"),
                        Self.checkout("m1", unit: "u1"),
                    ]
                ]
            )
            #expect(reply.object?["accepted"] == 2, "\(reply.text)")
            #expect(reply.object?["ignored"] == 1)
            #expect(reply.object?["duplicates"] == 1)
            #expect(reply.object?["rejected"]?.arrayValue?.count == 1, "accepted + duplicates + ignored + rejected = 5")
            #expect(try await EventIngestionTests.counts(server, database) == ["metric": 1, "exposure": 1])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func eachEnvironmentHasADailyQuota(database: TestDatabase) async throws {
        let quota: (inout ServerConfiguration) -> Void = { $0.eventQuotaPerDay = 5 }
        try await TestServer.run(database, configure: quota) { server in
            try await EventIngestionTests.startExperiment(server)
            func send(_ ids: [String]) async throws -> TestServer.Reply {
                try await server.send(
                    .post,
                    Self.path,
                    json: ["events": .array(ids.map { Self.checkout($0, unit: "u1") })]
                )
            }
            #expect(try await send(["q1", "q2", "q3"]).object?["accepted"] == 3)
            let again = try await send(["q1", "q2", "q3"])
            #expect(again.object?["duplicates"] == 3, "duplicates are not stored and use none of the quota")

            // Retry-After counts to 00:00 UTC from the server's clock, read between these two.
            func secondsUntilTomorrow(_ now: Int64) -> Int { Int((86_400_000 - now % 86_400_000 + 999) / 1_000) }
            let latest = secondsUntilTomorrow(Clock.nowMilliseconds())
            let refused = try await send(["q4", "q5", "q6"])
            let earliest = secondsUntilTomorrow(Clock.nowMilliseconds())
            #expect(refused.status == .tooManyRequests, "\(refused.text)")
            #expect(refused.errorStatus == "RESOURCE_EXHAUSTED")
            let message = try #require(refused.errorMessage)
            #expect(message.hasPrefix("demo/production may store 5 events a day (UTC) on this server and has 2 left"))
            #expect(message.contains("--event-quota-per-day (VANE_EVENT_QUOTA_PER_DAY)"), "\(message)")
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect((earliest...latest).contains(retryAfter), "until 00:00 UTC: \(retryAfter)")

            #expect(try await send(["q4", "q5"]).object?["accepted"] == 2, "what is left of the quota")
            #expect(try await send(["q6"]).status == .tooManyRequests)
            let ignored = try await server.send(
                .post,
                Self.path,
                json: ["events": [Self.event("s1", "metric", unit: "u1", ["name": "screen_viewed"])]]
            )
            #expect(ignored.object?["ignored"] == 1, "events that are not stored need no quota: \(ignored.text)")
            #expect(try await EventIngestionTests.counts(server, database) == ["metric": 5])
        }
    }

    /// A relay forwards its users' events from one address: events draw on a budget of their own,
    /// not on fetch's per-client one.
    @Test(arguments: TestDatabase.allCases)
    func eventsHaveARateBudgetOfTheirOwn(database: TestDatabase) async throws {
        // Fetch's budget as small as it can be: the relay's batches must not draw on it.
        let smallFetchBudget: (inout ServerConfiguration) -> Void = {
            $0.rateLimit = 0.01
            $0.addressRateLimit = 0.01
        }
        try await TestServer.run(database, configure: smallFetchBudget) { server in
            try await EventIngestionTests.startExperiment(server)
            let key = try await server.createKey(role: "client")
            for batch in 0..<30 {
                let reply = try await server.send(
                    .post,
                    Self.path,
                    key: key,
                    json: ["events": [Self.checkout("m\(batch)", unit: "u\(batch)")]]
                )
                #expect(reply.status == .ok, "batch \(batch): \(reply.text)")
            }
        }
        let budgets: [(configure: @Sendable (inout ServerConfiguration) -> Void, refuser: String)] = [
            ({ $0.eventAddressRateLimit = 0.01 }, "this address"),
            (
                {
                    $0.eventAddressRateLimit = 0
                    $0.eventKeyRateLimit = 0.01
                }, "all clients of this key together"
            ),
        ]
        for budget in budgets {
            try await TestServer.run(database, configure: budget.configure) { server in
                let key = try await server.createKey(role: "client")
                let body: JSONValue = ["events": [Self.checkout("m1", unit: "u1")]]
                #expect(try await server.send(.post, Self.path, key: key, json: body).status == .ok)
                let refused = try await server.send(.post, Self.path, key: key, json: body)
                #expect(refused.status == .tooManyRequests, "\(refused.text)")
                #expect(refused.errorMessage?.hasPrefix(budget.refuser) == true, "\(refused.text)")
                #expect(refused.headers[.retryAfter] != nil)
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func exposuresFromBeforeTheStartDoNotCount(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server, startedAgo: 0)
            let reply = try await server.send(
                .post,
                Self.path,
                json: [
                    "events": [
                        Self.exposure("early", unit: "u1", at: -600),
                        // A device clock a minute behind: the same allowance as ahead.
                        Self.exposure("behind", unit: "u2", at: -60),
                    ]
                ]
            )
            #expect(Self.rejections(reply) == ["events[0].time before-start"], "\(reply.text)")
            #expect(reply.object?["accepted"] == 1)
            let results = try await ExperimentResultsTests.results(server)
            #expect(ExperimentResultsTests.exposed(results).values.reduce(0, +) == 1, "\(results)")
        }
    }

    /// Two experiments read the same event name: each export holds its own units' events, and a
    /// unit's event stored before the experiment existed, which counts once the unit is exposed.
    @Test(arguments: TestDatabase.allCases)
    func theExportHoldsExactlyTheEventsThatCanCount(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            // u-early's checkout arrives before banner-test exists (its device's clock runs 4
            // minutes ahead); it is stored because checkout-button reads the name.
            let early = try await server.send(
                .post,
                Self.path,
                json: ["events": [Self.checkout("m-early", unit: "u-early", at: 240)]]
            )
            #expect(early.object?["accepted"] == 1, "\(early.text)")
            // banner-test splits banner_text on a percent condition of its own (a variant's condition
            // must be a random split); checkout-button's split stays as it was.
            let split = try await server.publish([
                "conditions": [
                    ["name": "checkout_test_b", "expression": "percent('checkout_test') between 50 and 100"],
                    ["name": "banner_test_b", "expression": "percent('banner_test') between 50 and 100"],
                ],
                "parameters": [
                    "checkout_variant": [
                        "defaultValue": ["value": "control"],
                        "conditionalValues": ["checkout_test_b": ["value": "one_page"]],
                    ],
                    "banner_text": [
                        "defaultValue": ["value": "Welcome"],
                        "conditionalValues": ["banner_test_b": ["value": "Hallo"]],
                    ],
                ],
            ])
            #expect(split.status == .ok, "\(split.text)")
            let banner: JSONValue = [
                "key": "banner-test", "parameters": ["banner_text"],
                "variants": [
                    ["name": "control", "weight": 50],
                    ["name": "german", "condition": "banner_test_b", "weight": 50],
                ],
                "primaryMetric": ["event": "checkout_completed", "kind": "conversion"],
            ]
            #expect(try await server.send(.post, ExperimentAPITests.path, json: banner).status == .created)
            #expect(try await server.send(.post, ExperimentAPITests.path + "/banner-test/start").status == .ok)
            let reply = try await server.send(
                .post,
                Self.path,
                json: [
                    "events": [
                        Self.exposure("x-a", unit: "u-a"), Self.checkout("m-a", unit: "u-a"),
                        Self.exposure("x-b", unit: "u-b", experiment: "banner-test"), Self.checkout("m-b", unit: "u-b"),
                        Self.exposure("x-early", unit: "u-early", experiment: "banner-test"),
                    ]
                ]
            )
            #expect(reply.object?["accepted"] == 5, "\(reply.text)")
            #expect(try await Self.exportedIds(server, "checkout-button") == ["m-a", "x-a"])
            #expect(try await Self.exportedIds(server, "banner-test") == ["m-early", "m-b", "x-b", "x-early"])
            let results = try await server.send(.get, ExperimentAPITests.path + "/banner-test/results")
            let conversion = ExperimentResultsTests.variants(
                try #require(results.object),
                metric: "checkout_completed",
                measure: "conversionRate"
            )
            #expect(conversion["control"]?["convertedUnits"] == 2, "u-early's early checkout counts: \(results.text)")
        }
    }
}
