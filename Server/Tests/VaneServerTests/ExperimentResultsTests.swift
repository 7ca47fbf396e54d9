import Foundation
import Logging
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `GET …/experiments/{key}/results` (issue #15): the sums kept as events arrive, read back as
/// counts, health checks and statistics, on both databases.
@Suite(.timeLimit(.minutes(10))) struct ExperimentResultsTests {
    static let eventsPath = TestServer.demoPath + "/events"
    static let resultsPath = ExperimentAPITests.path + "/checkout-button/results"

    /// An event at `offset` seconds from now (events must be within the last 30 days).
    static func event(_ id: String, unit: String, at offset: Int, _ members: JSONObject) -> JSONValue {
        var object: JSONObject = [
            "id": .string(id), "unit": .string(unit),
            "time": .string(Clock.rfc3339(milliseconds: Clock.nowMilliseconds() + Int64(offset) * 1_000)),
        ]
        for member in members { object[member.key] = member.value }
        return .object(object)
    }

    static func exposure(_ id: String, unit: String, variant: String, at offset: Int = -3_600) -> JSONValue {
        event(
            id,
            unit: unit,
            at: offset,
            ["type": "exposure", "experiment": "checkout-button", "variant": .string(variant), "templateVersion": "1"]
        )
    }

    static func metric(
        _ id: String,
        unit: String,
        name: String,
        value: Double = 1,
        at offset: Int = -1_800
    )
        -> JSONValue
    {
        event(
            id,
            unit: unit,
            at: offset,
            ["type": "metric", "name": .string(name), "value": .number(JSONNumber(value))]
        )
    }

    static func send(_ server: TestServer, _ events: [JSONValue]) async throws {
        let reply = try await server.send(.post, eventsPath, json: ["events": .array(events)])
        #expect(reply.status == .ok, "\(reply.text)")
        #expect(reply.object?["rejected"]?.arrayValue == [], "\(reply.text)")
    }

    static func results(_ server: TestServer) async throws -> JSONObject {
        let reply = try await server.send(.get, resultsPath)
        #expect(reply.status == .ok, "\(reply.text)")
        return try #require(reply.object, "\(reply.text)")
    }

    /// A measure's per-variant entries by variant name.
    static func variants(_ results: JSONObject, metric: String, measure: String) -> [String: JSONObject] {
        let metricObject = results["metrics"]?.arrayValue?.compactMap(\.objectValue).first {
            $0["name"]?.stringValue == metric
        }
        let measureObject = metricObject?["measures"]?.arrayValue?.compactMap(\.objectValue).first {
            $0["measure"]?.stringValue == measure
        }
        var byName: [String: JSONObject] = [:]
        for variant in measureObject?["variants"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            if let name = variant["variant"]?.stringValue { byName[name] = variant }
        }
        return byName
    }

    static func exposed(_ results: JSONObject) -> [String: Int] {
        var counts: [String: Int] = [:]
        for variant in results["variants"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            if let name = variant["name"]?.stringValue, case .number(let n)? = variant["exposedUnits"] {
                counts[name] = n.intValue
            }
        }
        return counts
    }

    @Test(arguments: TestDatabase.allCases)
    func exposuresOfAVersionNoAppFetchedAreFlagged(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            // Version 1 is live, but no app has fetched it yet.
            try await Self.send(server, [Self.exposure("x1", unit: "u1", variant: "control")])
            let key = try await server.createKey(role: "client")
            let fetched = try await server.send(.post, TestServer.demoPath + "/fetch", key: key, json: ["context": [:]])
            #expect(fetched.status == .ok)
            var late = Self.exposure("x3", unit: "u3", variant: "new-flow").objectValue ?? [:]
            late["templateVersion"] = "7"  // never published here: another server's, or made up
            try await Self.send(server, [Self.exposure("x2", unit: "u2", variant: "control"), .object(late)])
            // A replay is a duplicate: it counts nothing again.
            try await Self.send(server, [.object(late)])

            let health = try await Self.results(server)["health"]?.objectValue
            #expect(
                health?["exposuresWithoutFetch"] == 2,
                "x1 (before any fetch) and x3 (version 7): \(String(describing: health))"
            )
            let warnings = health?["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(
                warnings.contains { $0.hasPrefix("2 exposure(s) name a template version no app fetched") },
                "\(warnings)"
            )
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func resultsCountUnitsOnceAndOnlyEventsAfterTheirExposure(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            let before = try await Self.results(server)
            #expect(before["notice"]?.stringValue?.contains("no unit has been exposed") == true, "\(before)")
            #expect(Self.exposed(before) == ["control": 0, "new-flow": 0])

            try await Self.send(
                server,
                [
                    // u1: a checkout before its exposure (does not count), one after (counts).
                    Self.metric("m0", unit: "u1", name: "checkout_completed", at: -7_200),
                    Self.exposure("x1", unit: "u1", variant: "control"),
                    Self.metric("m1", unit: "u1", name: "checkout_completed"),
                    Self.metric("r1", unit: "u1", name: "revenue", value: 30),
                    Self.exposure("x2", unit: "u2", variant: "control"),
                    Self.exposure("x3", unit: "u3", variant: "new-flow"),
                    Self.metric("m3", unit: "u3", name: "checkout_completed"),
                    Self.metric("r3", unit: "u3", name: "revenue", value: 50),
                    Self.metric("r3b", unit: "u3", name: "revenue", value: 20),
                    // Never exposed: kept raw, counted nowhere.
                    Self.metric("m9", unit: "u9", name: "checkout_completed"),
                ]
            )
            // u4's checkout arrives before its exposure (sent late by an app that was offline).
            try await Self.send(server, [Self.metric("m4", unit: "u4", name: "checkout_completed")])
            try await Self.send(server, [Self.exposure("x4", unit: "u4", variant: "new-flow")])

            let results = try await Self.results(server)
            #expect(results["notice"] == nil, "\(results)")
            #expect(Self.exposed(results) == ["control": 2, "new-flow": 2])
            let conversion = Self.variants(results, metric: "checkout_completed", measure: "conversionRate")
            #expect(conversion["control"]?["convertedUnits"] == 1, "u1's checkout before exposure is not a second")
            #expect(conversion["new-flow"]?["convertedUnits"] == 2, "u4's late exposure counts its stored checkout")
            let revenue = Self.variants(results, metric: "revenue", measure: "meanPerUnit")
            #expect(revenue["control"]?["estimate"]?.objectValue?["value"] == 15, "30 over 2 units")
            #expect(revenue["new-flow"]?["estimate"]?.objectValue?["value"] == 35, "70 over 2 units")
            let comparisons = results["metrics"]?.arrayValue?.first?.objectValue?["measures"]?.arrayValue?.first?
                .objectValue?["comparisons"]?.arrayValue
            #expect(comparisons?.count == 1)
            #expect(comparisons?.first?.objectValue?["alwaysValid"]?.objectValue?["pValue"] != nil)
            #expect(results["metrics"]?.arrayValue?.first?.objectValue?["role"] == "primary")

            // A retried batch (same ids) changes nothing.
            let reply = try await server.send(
                .post,
                Self.eventsPath,
                json: [
                    "events": [
                        Self.exposure("x3", unit: "u3", variant: "new-flow"),
                        Self.metric("r3", unit: "u3", name: "revenue", value: 50),
                    ]
                ]
            )
            #expect(reply.object?["duplicates"] == 2)
            #expect(try await Self.results(server) == results)
        }
    }

    /// A retried batch that also brings new events: the events stored before (by the first
    /// send) are read back once, the batch's new ones are counted as they are, and the
    /// retried ids are not counted again (the counting reads the stored events around the
    /// rows the batch just stored, which each database finds its own way).
    @Test(arguments: TestDatabase.allCases)
    func aRetriedBatchWithNewEventsCountsEachEventOnce(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            // u1's revenue arrives before its exposure; so does u2's, in a batch whose reply is lost.
            try await Self.send(
                server,
                [
                    Self.metric("r1", unit: "u1", name: "revenue", value: 10),
                    Self.metric("r2", unit: "u2", name: "revenue", value: 7),
                ]
            )
            let reply = try await server.send(
                .post,
                Self.eventsPath,
                json: [
                    "events": [
                        Self.metric("r1", unit: "u1", name: "revenue", value: 10),
                        Self.exposure("x1", unit: "u1", variant: "control"),
                        Self.metric("r1b", unit: "u1", name: "revenue", value: 5),
                        Self.metric("r2", unit: "u2", name: "revenue", value: 7),
                        Self.exposure("x2", unit: "u2", variant: "new-flow"),
                        Self.metric("r2b", unit: "u2", name: "revenue", value: 1),
                        Self.metric("r2b", unit: "u2", name: "revenue", value: 1),
                        // A unit more in each variant, without revenue: a mean needs two.
                        Self.exposure("x3", unit: "u3", variant: "control"),
                        Self.exposure("x4", unit: "u4", variant: "new-flow"),
                    ]
                ]
            )
            #expect(reply.object?["accepted"] == 6, "\(reply.text)")
            #expect(reply.object?["duplicates"] == 3, "\(reply.text)")
            let results = try await Self.results(server)
            #expect(Self.exposed(results) == ["control": 2, "new-flow": 2])
            let revenue = Self.variants(results, metric: "revenue", measure: "meanPerUnit")
            let control = revenue["control"]?["estimate"]?.objectValue?["value"]
            #expect(control == 7.5, "u1: 10 stored before and 5 new, over 2 units: \(results)")
            let newFlow = revenue["new-flow"]?["estimate"]?.objectValue?["value"]
            #expect(newFlow == 4, "u2: 7 stored before and 1 new (sent twice), over 2 units: \(results)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aUnitInTwoVariantsIsFlaggedAndLeftOut(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.send(
                server,
                [
                    Self.exposure("a1", unit: "u1", variant: "control"),
                    Self.exposure("a2", unit: "u2", variant: "control"),
                    Self.exposure("a3", unit: "u3", variant: "new-flow"),
                    Self.metric("m1", unit: "u1", name: "checkout_completed"),
                ]
            )
            try await Self.send(server, [Self.exposure("a4", unit: "u1", variant: "new-flow", at: -3_000)])
            let results = try await Self.results(server)
            let health = results["health"]?.objectValue
            #expect(health?["unitsInSeveralVariants"] == 1)
            #expect(
                health?["warnings"]?.arrayValue?.first?.stringValue?.contains("more than one variant") == true,
                "\(results)"
            )
            #expect(Self.exposed(results) == ["control": 1, "new-flow": 1])
            let conversion = Self.variants(results, metric: "checkout_completed", measure: "conversionRate")
            #expect(conversion["control"]?["convertedUnits"] == 0, "u1's checkout left with u1")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aStoppedExperimentKeepsItsResultsAndCountsNoMore(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.send(
                server,
                [
                    Self.exposure("a1", unit: "u1", variant: "control"),
                    Self.exposure("a2", unit: "u2", variant: "new-flow"),
                ]
            )
            let stopped = try await server.send(.post, ExperimentAPITests.path + "/checkout-button/stop")
            #expect(stopped.status == .ok, "\(stopped.text)")
            let frozen = try await Self.results(server)
            #expect(frozen["status"] == "stopped")
            // Metric events still arrive (other experiments may read them); this one is closed.
            try await Self.send(server, [Self.metric("m1", unit: "u1", name: "checkout_completed")])
            var after = try await Self.results(server)
            #expect(after["status"] == "stopped")
            after["status"] = frozen["status"]
            #expect(after == frozen)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func rawEventsExportAsNDJSONAndRetentionKeepsTheResults(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await EventIngestionTests.startExperiment(server)
            // The metric event arrives first although it happened last: an export lists events in
            // the order they were received (a batch's by id), so a later export can continue
            // where one stopped even when offline apps send old events.
            try await Self.send(
                server,
                [
                    Self.metric("z-m1", unit: "u1", name: "checkout_completed", at: -600),
                    Self.metric("other", unit: "u1", name: "unrelated", at: -500),
                ]
            )
            clock.advance(seconds: 1)  // the next batch's receipt time is later
            try await Self.send(
                server,
                [
                    Self.exposure("x2", unit: "u2", variant: "new-flow", at: -3_000),
                    Self.exposure("x1", unit: "u1", variant: "control", at: -3_000),
                ]
            )
            let export = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events")
            #expect(export.status == .ok, "\(export.text)")
            #expect(export.headers[.contentType] == "application/x-ndjson")
            let lines = export.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue }
            #expect(
                lines.map { $0["id"]?.stringValue } == ["z-m1", "x1", "x2"],
                "receipt order, then id; no unrelated event"
            )
            #expect(lines.dropFirst().first?["variant"] == "control")
            #expect(lines.first?["receiveTime"]?.stringValue?.hasPrefix("20") == true)
            #expect(lines.first?["value"] == 1)

            let since = Clock.rfc3339(milliseconds: Clock.nowMilliseconds() - 1_000 * 1_000)
            let recent = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events?since=\(since)")
            #expect(recent.text.split(separator: "\n").count == 1, "\(recent.text)")
            let bad = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events?until=soon")
            #expect(bad.status == .badRequest)
            #expect(bad.errorMessage?.contains("until") == true)

            // An app that was offline sends an event that happened 20 days ago: retention counts
            // from receipt, so 15 days later (35 days after it happened) it is still there.
            // (The export holds the metric events of units the experiment exposed: u1's.)
            try await Self.send(
                server,
                [Self.metric("late", unit: "u1", name: "checkout_completed", at: -20 * 86_400)]
            )
            let before = try await Self.results(server)
            let retention = EventRetention(
                events: ExperimentEventStore(engine: server.application.store.engine),
                retentionDays: 31,
                logger: Logger(label: "test")
            )
            try await retention.deleteExpired(now: Clock.milliseconds(clock.now) + 15 * 86_400_000)
            let kept = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events")
            #expect(
                kept.text.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)).objectValue?["id"] }
                    == ["z-m1", "x1", "x2", "late"],
                "nothing was received more than 31 days before"
            )
            try await retention.deleteExpired(now: Clock.milliseconds(clock.now) + 31 * 86_400_000)
            let emptied = try await server.send(.get, ExperimentAPITests.path + "/checkout-button/events")
            #expect(emptied.text.isEmpty, "every event is older than the retention period")
            #expect(try await Self.results(server) == before, "results keep counting deleted events")
        }
    }

    /// Unit `unit`'s exposure to `checkout-button` (control when even) at `time`, and its
    /// `checkout_completed` a second later; ids `x<unit>` and `m<unit>`.
    static func exposureAndCheckout(unit: Int, at time: Int64) -> [ExperimentEvent] {
        let exposure = ExperimentEvent.Kind.exposure(
            experiment: "checkout-button",
            variant: unit % 2 == 0 ? "control" : "new-flow",
            flagKey: nil,
            templateVersion: 1
        )
        let checkout = ExperimentEvent.Kind.metric(name: "checkout_completed", value: 1, properties: nil)
        return [
            ExperimentEvent(id: "x\(unit)", unit: "u\(unit)", time: time, kind: exposure),
            ExperimentEvent(id: "m\(unit)", unit: "u\(unit)", time: time + 1_000, kind: checkout),
        ]
    }

    /// Concurrent batches share transactions (EventIngestor); each request still learns exactly
    /// which of its events were new, and every unit counts once. (Through the ingestor itself:
    /// the test client sends its requests one after another on one connection.)
    @Test(arguments: TestDatabase.allCases)
    func concurrentBatchesCountEveryEventOnce(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            let engine = server.application.store.engine
            let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
            let running = try await ExperimentStore(engine: engine).runningExperiments(
                environment
            )
            #expect(running.map(\.key) == ["checkout-button"])
            let ingestor = EventIngestor(store: ExperimentEventStore(engine: engine))
            let time = Clock.nowMilliseconds() - 3_600_000
            func events(unit: Int) -> [ExperimentEvent] { Self.exposureAndCheckout(unit: unit, at: time) }
            // 24 batches of 50 units; batch k repeats the last 10 units of batch k-1 (same ids).
            var batches: [[ExperimentEvent]] = []
            for batch in 0..<24 {
                batches.append(((batch * 40)..<(batch * 40 + 50)).flatMap(events(unit:)))
            }
            let accepted = try await withThrowingTaskGroup(of: Int.self) { group in
                for batch in batches {
                    group.addTask {
                        try await ingestor.ingest(batch, in: environment, running: running, receivedAt: time)
                    }
                }
                return try await group.reduce(0, +)
            }
            let units = 23 * 40 + 50
            #expect(accepted == 2 * units, "every distinct event new for exactly one request")
            let results = try await Self.results(server)
            #expect(Self.exposed(results) == ["control": units / 2, "new-flow": units / 2])
            let conversion = Self.variants(results, metric: "checkout_completed", measure: "conversionRate")
            #expect(conversion["control"]?["convertedUnits"]?.numberValue?.intValue == units / 2)
            // A conversion counts a unit once however many checkouts it has: the sums show
            // whether a checkout was counted twice (read back as well as taken from its batch).
            let stored = try await engine.withSession { database in
                try await ExperimentTallyStore.stored(environment, experiment: "checkout-button", database: database)
            }
            for variant in ["control", "new-flow"] {
                let sums = stored.tally.variants[variant]?.metrics["checkout_completed"]
                #expect(sums?.valueSum == Double(units / 2), "\(variant): \(String(describing: sums))")
            }
        }
    }

    @Test func resultsOfAnUnknownExperimentAre404() async throws {
        try await TestServer.run(.sqlite) { server in
            let reply = try await server.send(.get, ExperimentAPITests.path + "/nope/results")
            #expect(reply.status == .notFound)
            #expect(reply.errorMessage?.contains("nope") == true, "\(reply.text)")
            let client = try await server.createKey(role: "client")
            let denied = try await server.send(.get, Self.resultsPath, key: client)
            #expect(denied.status == .forbidden, "a client key sends events; it does not read results")
        }
    }
}
