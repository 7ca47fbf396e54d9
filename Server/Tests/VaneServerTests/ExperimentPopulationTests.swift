import Foundation
import TestSupport
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// Simulated populations of 20,000 units sent through `POST …/events` and read back through
/// `GET …/results` (issue #15): the counts are exactly the simulation's, every statistic equals
/// scipy/statsmodels' within 1e-6, and a 50/45 split is flagged as a sample-ratio mismatch.
///
/// The populations and their reference statistics are in
/// `Tests/ExperimentStatisticsTests/Fixtures/population.json`, written by `make_population.py`
/// (its docstring has the command); the generator is the same SplitMix64 on both sides.
@Suite(.timeLimit(.minutes(10))) struct ExperimentPopulationTests {
    struct Fixture: Decodable {
        var generatorCheck: GeneratorCheck
        var populations: [Population]
    }

    struct GeneratorCheck: Decodable {
        var seed: UInt64
        var firstOutputs: [String]
    }

    struct Population: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var seed: UInt64
        var units: Int
        var variants: [Variant]
        var expected: Expected
        var testDescription: String { name }
    }

    struct Variant: Decodable, Sendable {
        var name: String
        var splitWeight: Double
        var assignmentProbability: Double
        var rate: Double
        var minCents: Int
        var spanCents: Int
    }

    struct Expected: Decodable, Sendable {
        var counts: [Counts]
        var sampleRatioMismatch: ReferenceStatistics.SampleRatio
        var measures: [ReferenceStatistics.MeasureValues]
    }

    struct Counts: Decodable, Sendable {
        var variant: String
        var exposedUnits: Int
        var convertedUnits: Int
        var valueSumCents: Int
        var sessionsSum: Int
    }

    static let fixture: Fixture = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ExperimentStatisticsTests/Fixtures/population.json")
        do {
            return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
        } catch {
            fatalError("cannot read \(url.path): \(error)")
        }
    }()

    /// One simulated unit, drawn exactly as make_population.py draws it.
    struct SimulatedUnit {
        var variant: String
        var converted: Bool
        var valueCents: Int
        var sessions: Int
    }

    static func simulate(_ population: Population) -> [SimulatedUnit] {
        var random = SplitMix64(seed: population.seed)
        var cumulative: [Double] = []
        var running = 0.0
        for variant in population.variants {
            running += variant.assignmentProbability
            cumulative.append(running)
        }
        return (0..<population.units).map { _ in
            let (uVariant, uConvert, uValue, uSessions) = (
                random.uniform(), random.uniform(), random.uniform(), random.uniform()
            )
            let index = cumulative.firstIndex { uVariant < $0 } ?? population.variants.count - 1
            let variant = population.variants[index]
            let converted = uConvert < variant.rate
            return SimulatedUnit(
                variant: variant.name,
                converted: converted,
                valueCents: converted ? variant.minCents + Int((uValue * Double(variant.spanCents)).rounded(.down)) : 0,
                sessions: 1 + Int((uSessions * 4).rounded(.down))
            )
        }
    }

    @Test func theGeneratorIsTheFixtureScripts() {
        var random = SplitMix64(seed: Self.fixture.generatorCheck.seed)
        let outputs = (0..<Self.fixture.generatorCheck.firstOutputs.count).map { _ in
            "0x" + String(random.next(), radix: 16).leftPadded(to: 16)
        }
        #expect(outputs == Self.fixture.generatorCheck.firstOutputs)
    }

    @Test(arguments: TestDatabase.allCases, Self.fixture.populations)
    func aSimulatedPopulationGivesTheReferenceStatistics(database: TestDatabase, population: Population) async throws {
        let units = Self.simulate(population)
        try await TestServer.run(database) { server in
            let experiment: JSONValue = [
                "key": "population",
                "hypothesis": .string(population.name),
                "parameters": ["checkout_variant"],
                "variants": [
                    ["name": "control", "weight": .number(JSONNumber(population.variants[0].splitWeight))],
                    [
                        "name": "treatment", "condition": "checkout_test_b",
                        "weight": .number(JSONNumber(population.variants[1].splitWeight)),
                    ],
                ],
                "primaryMetric": ["event": "purchase", "kind": "conversion"],
                "guardrailMetrics": [
                    ["name": "order_value", "event": "purchase", "kind": "mean"],
                    [
                        "name": "revenue_per_session", "event": "purchase", "kind": "ratio",
                        "denominatorEvent": "session_started",
                    ],
                ],
            ]
            let created = try await server.send(.post, ExperimentAPITests.path, json: experiment)
            #expect(created.status == .created, "\(created.text)")
            #expect(try await server.send(.post, ExperimentAPITests.path + "/population/start").status == .ok)
            // The units were exposed over the last two hours: the experiment ran since before.
            try await EventIngestionTests.backdateStart(server, key: "population", seconds: 3 * 3_600)

            // Every unit's exposure, sessions and purchase, in batches of 1,000 as an SDK backlog.
            let start = Clock.nowMilliseconds() - 2 * 3_600 * 1_000
            var batch: [JSONValue] = []
            func flush() async throws {
                guard !batch.isEmpty else { return }
                let reply = try await server.send(
                    .post,
                    ExperimentResultsTests.eventsPath,
                    json: ["events": .array(batch)]
                )
                #expect(reply.status == .ok, "\(reply.text.prefix(500))")
                #expect(reply.object?["accepted"]?.numberValue?.intValue == batch.count, "\(reply.text.prefix(500))")
                batch.removeAll()
            }
            func add(_ event: JSONObject) async throws {
                batch.append(.object(event))
                if batch.count == 1_000 { try await flush() }
            }
            for (index, unit) in units.enumerated() {
                let id = "unit-\(index)"
                let exposed = start + Int64(index)
                try await add([
                    "id": .string("x-\(index)"), "type": "exposure", "unit": .string(id),
                    "time": .string(Clock.rfc3339(milliseconds: exposed)), "experiment": "population",
                    "variant": .string(unit.variant), "templateVersion": "1",
                ])
                for session in 0..<unit.sessions {
                    try await add([
                        "id": .string("s-\(index)-\(session)"), "type": "metric", "unit": .string(id),
                        "time": .string(Clock.rfc3339(milliseconds: exposed + 1_000)), "name": "session_started",
                    ])
                }
                if unit.converted {
                    try await add([
                        "id": .string("p-\(index)"), "type": "metric", "unit": .string(id),
                        "time": .string(Clock.rfc3339(milliseconds: exposed + 2_000)), "name": "purchase",
                        "value": .number(JSONNumber(Double(unit.valueCents) / 100)),
                    ])
                }
            }
            try await flush()

            if population.name == "known_effect" {
                // Every event comes back from the export, over many pages.
                let export = try await server.send(.get, ExperimentAPITests.path + "/population/events")
                let expected = units.reduce(0) { $0 + 1 + $1.sessions + ($1.converted ? 1 : 0) }
                #expect(export.text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } == expected)
            }
            let reply = try await server.send(.get, ExperimentAPITests.path + "/population/results")
            let results = try #require(reply.object, "\(reply.text.prefix(500))")
            Self.check(results, against: population)
        }
    }

    static func check(_ results: JSONObject, against population: Population) {
        let expected = population.expected
        // Counts: exact.
        let exposed = ExperimentResultsTests.exposed(results)
        let conversions = ExperimentResultsTests.variants(results, metric: "purchase", measure: "conversionRate")
        for counts in expected.counts {
            #expect(exposed[counts.variant] == counts.exposedUnits, "\(counts.variant) exposed units")
            #expect(
                conversions[counts.variant]?["convertedUnits"]?.numberValue?.intValue == counts.convertedUnits,
                "\(counts.variant) converted units"
            )
            let orderValues = ExperimentResultsTests.variants(results, metric: "order_value", measure: "meanPerUnit")
            let mean = orderValues[counts.variant]?["estimate"]?.objectValue?["value"]?.numberValue?.value ?? .nan
            #expect(
                Int((mean * Double(counts.exposedUnits) * 100).rounded()) == counts.valueSumCents,
                "\(counts.variant) order value sum"
            )
        }
        // Sample-ratio mismatch.
        let mismatch = results["health"]?.objectValue?["sampleRatioMismatch"]?.objectValue
        close(mismatch?["chiSquare"], expected.sampleRatioMismatch.chiSquare, "χ²")
        close(mismatch?["pValue"], expected.sampleRatioMismatch.pValue, "SRM p-value", absolute: 0)
        #expect(mismatch?["flagged"]?.boolValue == expected.sampleRatioMismatch.isMismatch, "SRM flag")
        let warnings = results["health"]?.objectValue?["warnings"]?.arrayValue ?? []
        #expect(
            warnings.contains { $0.stringValue?.hasPrefix("sample-ratio mismatch") == true }
                == expected.sampleRatioMismatch.isMismatch
        )
        // Every statistic.
        for measure in expected.measures {
            let metric =
                measure.metric == "purchase" && measure.measure == "meanPerUnit" ? "order_value" : measure.metric
            let label = "\(population.name) \(metric) \(measure.measure)"
            let object = results["metrics"]?.arrayValue?.compactMap(\.objectValue).first {
                $0["name"]?.stringValue == metric
            }?["measures"]?.arrayValue?.compactMap(\.objectValue).first {
                $0["measure"]?.stringValue == measure.measure
            }
            guard let object else {
                Issue.record("\(label): missing from the results")
                continue
            }
            let variants = ExperimentResultsTests.variants(results, metric: metric, measure: measure.measure)
            for estimate in measure.variants {
                let name = estimate.variant
                close(variants[name]?["estimate"]?.objectValue?["value"], estimate.value, "\(label) \(name) value")
                close(
                    variants[name]?["estimate"]?.objectValue?["variance"],
                    estimate.variance,
                    "\(label) \(name) variance"
                )
                close(
                    variants[name]?["interval"]?.objectValue?["lower"],
                    estimate.intervalLower,
                    "\(label) \(name) interval lower"
                )
                close(
                    variants[name]?["interval"]?.objectValue?["upper"],
                    estimate.intervalUpper,
                    "\(label) \(name) interval upper"
                )
            }
            let comparisons = object["comparisons"]?.arrayValue?.compactMap(\.objectValue) ?? []
            #expect(comparisons.count == measure.comparisons.count, "\(label) comparisons")
            for values in measure.comparisons {
                guard let actual = comparisons.first(where: { $0["variant"]?.stringValue == values.variant }) else {
                    Issue.record("\(label): no comparison for \(values.variant)")
                    continue
                }
                func at(_ path: [String]) -> JSONValue? {
                    path.reduce(JSONValue.object(actual) as JSONValue?) { $0?.objectValue?[$1] }
                }
                func at(_ path: String...) -> JSONValue? { at(path) }
                let l = "\(label) \(values.variant)"
                close(at("difference", "value"), values.difference, "\(l) difference")
                close(at("difference", "variance"), values.differenceVariance, "\(l) difference variance")
                close(at("relativeDifference", "value"), values.relativeDifference, "\(l) relative difference")
                close(at("relativeDifference", "variance"), values.relativeVariance, "\(l) relative variance")
                close(at("fixedHorizon", "zScore"), values.zScore, "\(l) z")
                close(at("fixedHorizon", "pValue"), values.pValue, "\(l) p-value")
                close(at("fixedHorizon", "interval", "lower"), values.intervalLower, "\(l) interval lower")
                close(at("fixedHorizon", "interval", "upper"), values.intervalUpper, "\(l) interval upper")
                close(at("fixedHorizon", "relativeInterval", "lower"), values.relativeIntervalLower, "\(l) rel. lower")
                close(at("fixedHorizon", "relativeInterval", "upper"), values.relativeIntervalUpper, "\(l) rel. upper")
                // The latest look, against the reference; the reported reading keeps the
                // smallest p-value and the narrowest intervals of every look (one per batch).
                let look = ["alwaysValid", "latestLook"]
                close(at(look + ["pValue"]), values.alwaysValidPValue, "\(l) always-valid p-value")
                close(at(look + ["interval", "lower"]), values.sequenceLower, "\(l) sequence lower")
                close(at(look + ["interval", "upper"]), values.sequenceUpper, "\(l) sequence upper")
                if let lower = values.relativeSequenceLower, let upper = values.relativeSequenceUpper {
                    close(at(look + ["relativeInterval", "lower"]), lower, "\(l) rel. seq. lower")
                    close(at(look + ["relativeInterval", "upper"]), upper, "\(l) rel. seq. upper")
                } else {
                    #expect(at(look + ["relativeInterval", "lower"]) == .null, "\(l) rel. seq. unbounded")
                }
                let running = at(["alwaysValid", "pValue"])?.numberValue?.value ?? .nan
                #expect(running <= values.alwaysValidPValue * (1 + 1e-9), "\(l) running p-value")
                let lower = at(["alwaysValid", "interval", "lower"])?.numberValue?.value ?? .nan
                let upper = at(["alwaysValid", "interval", "upper"])?.numberValue?.value ?? .nan
                #expect(lower >= values.sequenceLower - 1e-9 && upper <= values.sequenceUpper + 1e-9, "\(l) running")
                #expect((lower > 0 || upper < 0) == (running < 0.05), "\(l) the interval agrees with the p-value")
                close(at("bayesian", "chanceToBeatControl"), values.chanceToBeatControl, "\(l) chance to beat control")
                close(
                    at("bayesian", "expectedLossOfTreatment"),
                    values.expectedLossOfTreatment,
                    "\(l) loss of treatment"
                )
                close(at("bayesian", "expectedLossOfControl"), values.expectedLossOfControl, "\(l) loss of control")
            }
        }
    }

    /// Within 1e-6 relative (plus `absolute`) of the reference.
    static func close(
        _ actual: JSONValue?,
        _ expected: Double,
        _ what: String,
        absolute: Double = 1e-12,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let value = actual?.numberValue?.value else {
            Issue.record("\(what): missing, expected \(expected)", sourceLocation: sourceLocation)
            return
        }
        #expect(
            value == expected || abs(value - expected) <= 1e-6 * abs(expected) + absolute,
            "\(what): \(value), expected \(expected)",
            sourceLocation: sourceLocation
        )
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
