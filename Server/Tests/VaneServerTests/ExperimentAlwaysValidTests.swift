import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Issue #27 over real HTTP, on both databases: the always-valid reading is kept over every look
/// as events arrive (a result does not stop being significant because later events dilute it);
/// each variant's own interval and the experiment's confidence level and sample-ratio threshold;
/// who reads results where.
@Suite(.timeLimit(.minutes(10))) struct ExperimentAlwaysValidTests {
    /// `units` exposures per variant from `first` on, the first `converted` of each checking out.
    static func batch(
        from first: Int,
        units: Int,
        control: Int,
        treatment: Int
    ) -> [JSONValue] {
        var events: [JSONValue] = []
        for (variant, converted) in [("control", control), ("new-flow", treatment)] {
            for index in first..<(first + units) {
                let unit = "\(variant)-\(index)"
                events.append(ExperimentResultsTests.exposure("x-\(unit)", unit: unit, variant: variant))
                if index - first < converted {
                    events.append(ExperimentResultsTests.metric("m-\(unit)", unit: unit, name: "checkout_completed"))
                }
            }
        }
        return events
    }

    /// The primary metric's conversion-rate comparison of new-flow.
    static func comparison(_ results: JSONObject) throws -> JSONObject {
        let metric = try #require(results["metrics"]?.arrayValue?.first?.objectValue)
        let measure = try #require(metric["measures"]?.arrayValue?.first?.objectValue)
        #expect(measure["measure"] == "conversionRate")
        return try #require(measure["comparisons"]?.arrayValue?.first?.objectValue)
    }

    static func number(_ value: JSONValue?) -> Double? { value?.numberValue?.value }

    @Test(arguments: TestDatabase.allCases)
    func aSignificantResultStaysSignificantAfterLaterEventsDiluteIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            // 400 units each: control converts 20 %, new-flow 40 % (two requests, two looks).
            for first in [0, 200] {
                try await ExperimentResultsTests.send(
                    server,
                    Self.batch(from: first, units: 200, control: 40, treatment: 80)
                )
            }
            let early = try Self.comparison(try await ExperimentResultsTests.results(server))
            let earlyP = try #require(Self.number(early["alwaysValid"]?.objectValue?["pValue"]))
            #expect(earlyP < 0.05, "\(early)")

            // 600 more each: control 20 % again, new-flow only 10 %. By themselves the sums now
            // say nothing (new-flow 22 % against 20 %).
            for first in [400, 600, 800] {
                try await ExperimentResultsTests.send(
                    server,
                    Self.batch(from: first, units: 200, control: 40, treatment: 20)
                )
            }
            let late = try Self.comparison(try await ExperimentResultsTests.results(server))
            let alwaysValid = try #require(late["alwaysValid"]?.objectValue)
            let latest = try #require(alwaysValid["latestLook"]?.objectValue)
            let latestP = try #require(Self.number(latest["pValue"]))
            #expect(latestP > 0.5, "the latest look alone: \(latest)")
            #expect(latest["counts"] == true)

            let p = try #require(Self.number(alwaysValid["pValue"]))
            #expect(p <= earlyP, "the earlier minimum is kept: \(alwaysValid)")
            #expect(p < 0.05)
            let interval = try #require(alwaysValid["interval"]?.objectValue)
            #expect(try #require(Self.number(interval["lower"])) > 0, "the intersection excludes 0: \(interval)")
            let relative = try #require(alwaysValid["relativeInterval"]?.objectValue)
            #expect(try #require(Self.number(relative["lower"])) > 0, "and so does the relative one: \(relative)")
            let latestInterval = try #require(latest["interval"]?.objectValue)
            #expect(try #require(Self.number(latestInterval["lower"])) < 0, "\(latestInterval)")

            // The console's page reads the same running reading.
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                ConsoleExperimentTests.base + "/checkout-button",
                cookie: viewer.cookie
            )
            #expect(page.text.contains("p \(ExperimentReport.pValueText(p))"), "\(page.text)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theConfidenceLevelAndSampleRatioThresholdAreCheckedStoredAndShown(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var definition = ExperimentAPITests.checkout.objectValue ?? [:]
            definition["confidenceLevel"] = 0.5
            definition["sampleRatioThreshold"] = "0.01"
            let refused = try await server.send(.post, ExperimentAPITests.path, json: .object(definition))
            #expect(refused.status == .badRequest, "\(refused.text)")
            let details = refused.text
            #expect(details.contains("confidenceLevel") && details.contains("0.8 to 0.999"), "\(details)")
            #expect(details.contains("sampleRatioThreshold") && details.contains("found a string"), "\(details)")
            definition["confidenceLevel"] = 0.9995
            definition["sampleRatioThreshold"] = 0.2
            let again = try await server.send(.post, ExperimentAPITests.path, json: .object(definition))
            #expect(again.status == .badRequest)
            #expect(
                again.text.contains("confidenceLevel") && again.text.contains("sampleRatioThreshold"),
                "\(again.text)"
            )

            definition["confidenceLevel"] = 0.9
            definition["sampleRatioThreshold"] = 0.01
            let created = try await server.send(.post, ExperimentAPITests.path, json: .object(definition))
            #expect(created.status == .created, "\(created.text)")
            #expect(created.object?["confidenceLevel"] == 0.9)
            #expect(created.object?["sampleRatioThreshold"] == 0.01)
            #expect(try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start").status == .ok)
            // The population's exposures are dated up to an hour ago: the experiment started before.
            try await EventIngestionTests.backdateStart(server, key: "checkout-button", seconds: 3 * 3_600)
            try await ConsoleExperimentTests.fetch(server)
            try await ExperimentResultsTests.send(
                server,
                ConsoleExperimentTests.population(control: (200, 50), treatment: (200, 150))
            )
            let read = try await server.send(.get, ExperimentAPITests.path + "/checkout-button")
            #expect(read.object?["confidenceLevel"] == 0.9, "stored with the definition")

            let results = try await ExperimentResultsTests.results(server)
            #expect(results["confidenceLevel"] == 0.9)
            #expect(results["sampleRatioThreshold"] == 0.01)
            let mismatch = results["health"]?.objectValue?["sampleRatioMismatch"]?.objectValue
            #expect(mismatch?["threshold"] == 0.01, "the check uses the experiment's threshold")
            // Each variant's own interval: Wilson's at 90 % (statsmodels proportion_confint,
            // method="wilson": 50 of 200 and 150 of 200).
            let variants = ExperimentResultsTests.variants(
                results,
                metric: "checkout_completed",
                measure: "conversionRate"
            )
            let control = try #require(variants["control"]?["interval"]?.objectValue)
            #expect(abs(try #require(Self.number(control["lower"])) - 0.2031997101593004) < 1e-9, "\(control)")
            #expect(abs(try #require(Self.number(control["upper"])) - 0.30347387016808747) < 1e-9)
            let treatment = try #require(variants["new-flow"]?["interval"]?.objectValue)
            #expect(abs(try #require(Self.number(treatment["lower"])) - 0.6965261298319125) < 1e-9, "\(treatment)")

            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                ConsoleExperimentTests.base + "/checkout-button",
                cookie: viewer.cookie
            )
            #expect(page.text.contains("90 % confidence; the sample-ratio check flags p below 0.01"), "\(page.text)")
            #expect(page.text.contains("20.32 % to 30.35 %"), "control's own interval")
            #expect(page.text.contains("90 % interval"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func definitionsWithoutSettingsKeepTodaysDefaults(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            let read = try await server.send(.get, ExperimentAPITests.path + "/checkout-button")
            #expect(read.object?["confidenceLevel"] == 0.95)
            #expect(read.object?["sampleRatioThreshold"] == 0.001)
            try await ExperimentResultsTests.send(
                server,
                ConsoleExperimentTests.population(control: (300, 30), treatment: (200, 20))
            )
            let results = try await ExperimentResultsTests.results(server)
            let mismatch = results["health"]?.objectValue?["sampleRatioMismatch"]?.objectValue
            #expect(mismatch?["threshold"] == 0.001)
            #expect(mismatch?["flagged"] == true)
        }
    }

    /// The API takes keys; people read results in the console (docs/EXPERIMENTS.md, "Reading
    /// results"). A session cookie sent to the API is told where to go.
    @Test(arguments: TestDatabase.allCases)
    func peopleReadResultsInTheConsoleAndKeysThroughTheAPI(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await ExperimentResultsTests.send(
                server,
                ConsoleExperimentTests.population(control: (20, 5), treatment: (20, 10))
            )
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                ConsoleExperimentTests.base + "/checkout-button",
                cookie: viewer.cookie
            )
            #expect(page.status == .ok)
            #expect(page.text.contains("25.00 %") && page.text.contains("50.00 %"), "a viewer reads the rates")

            let withSession = try await ConsoleTests.request(
                server,
                .get,
                ExperimentResultsTests.resultsPath,
                cookie: viewer.cookie
            )
            #expect(withSession.status == .unauthorized)
            #expect(
                withSession.errorMessage?.contains(
                    "people signed in to the console read results on the experiment's page, "
                        + "/projects/demo/environments/production/experiments/checkout-button"
                ) == true,
                "\(withSession.text)"
            )
            let admin = try await server.send(.get, ExperimentResultsTests.resultsPath)
            #expect(admin.status == .ok)
            let client = try await server.createKey(role: "client")
            let refused = try await server.send(.get, ExperimentResultsTests.resultsPath, key: client)
            #expect(refused.status == .forbidden, "client keys send events but do not read results")
        }
    }
}
