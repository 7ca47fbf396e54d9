import ExperimentStatistics
import Foundation
import Testing

/// The rollout guard's one-sided reading (``OneSidedRegression``) over the running always-valid
/// readings (``AlwaysValidHistory``), look by look, against Fixtures/guardrail_reference.json:
/// written by Fixtures/make_guardrail_fixtures.py with scipy's brentq on the mSPRT likelihood ratio,
/// under the guard's configuration (``AnalysisConfiguration/guardrail(confidenceLevel:sampleRatioMismatchThreshold:)``).
struct GuardrailReferenceTests {
    struct Fixture: Decodable {
        struct Scenario: Decodable {
            struct Look: Decodable {
                let units: Int
                let comparisonConverted: Int
                let treatmentConverted: Int
                let lower: Double?
                let upper: Double?
                let worse: Bool
            }

            let name: String
            let errorRate: Double
            let guardrails: Int
            let margin: Double
            let looks: [Look]
        }

        /// A ratio guardrail (errors per request), each arm's sums as the server keeps them.
        struct RatioScenario: Decodable {
            struct Look: Decodable {
                let units: Int
                let comparison: RatioMetricAggregates
                let treatment: RatioMetricAggregates
                let lower: Double
                let upper: Double
                let worse: Bool
            }

            let name: String
            let errorRate: Double
            let guardrails: Int
            let margin: Double
            let looks: [Look]
        }

        let scenarios: [Scenario]
        let ratioScenarios: [RatioScenario]
    }

    static func fixture() throws -> Fixture {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/guardrail_reference.json")
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    static func arm(_ name: String, units: Int, converted: Int) -> VariantAggregates {
        // A conversion: a unit's value is 1 once it converted, so sum = sum of squares = converted.
        VariantAggregates(
            name: name,
            splitWeight: 1,
            exposedUnits: units,
            metrics: [
                "app_crashed": MetricAggregates(
                    convertedUnits: converted,
                    valueSum: Double(converted),
                    valueSumOfSquares: Double(converted)
                )
            ]
        )
    }

    static func configuration(errorRate: Double, guardrails: Int) -> AnalysisConfiguration {
        .guardrail(
            confidenceLevel: OneSidedRegression.confidenceLevel(errorRate: errorRate, guardrails: guardrails),
            sampleRatioMismatchThreshold: 0.001
        )
    }

    @Test func theGuardsRunningIntervalAndVerdictMatchScipyAtEveryLook() throws {
        let fixture = try Self.fixture()
        #expect(fixture.scenarios.count == 8)
        // What the mixture's τ and the rates' variance floor are for: caught within a few dozen
        // units per arm, and no false alarm without any event.
        let firstWorse = Dictionary(
            uniqueKeysWithValues: fixture.scenarios.map { ($0.name, $0.looks.first(where: \.worse)?.units) }
        )
        #expect((firstWorse["large_jump_1_to_60"] ?? nil).map { $0 <= 60 } == true, "\(firstWorse)")
        #expect((firstWorse["zero_baseline_0_to_40"] ?? nil).map { $0 <= 100 } == true, "\(firstWorse)")
        #expect(firstWorse["aa_no_events"] == .some(nil), "\(firstWorse)")
        for scenario in fixture.scenarios {
            let configuration = Self.configuration(errorRate: scenario.errorRate, guardrails: scenario.guardrails)
            var history = AlwaysValidHistory()
            for look in scenario.looks {
                history.recordLook(
                    ExperimentAggregates(
                        controlVariant: "comparison",
                        variants: [
                            Self.arm("comparison", units: look.units, converted: look.comparisonConverted),
                            Self.arm("treatment", units: look.units, converted: look.treatmentConverted),
                        ]
                    ),
                    configuration: configuration
                )
                let what = "\(scenario.name) at \(look.units) units per arm"
                let interval = history.sequence(metric: "app_crashed", measure: .conversionRate, variant: "treatment")?
                    .absoluteInterval
                if let lower = look.lower, let upper = look.upper {
                    expectClose(interval?.lower, lower, "\(what): lower end", relative: 1e-7, absolute: 1e-12)
                    expectClose(interval?.upper, upper, "\(what): upper end", relative: 1e-7, absolute: 1e-12)
                } else {
                    #expect(interval == nil, "\(what): no informative look yet")
                }
                let worse =
                    interval.map {
                        OneSidedRegression.isWorse($0, margin: scenario.margin, increaseIsBad: true)
                    } ?? false
                #expect(worse == look.worse, "\(what): the guard says worse = \(worse)")
            }
        }
    }

    @Test func aRatioGuardrailsRunningIntervalByTheDeltaMethodAndVerdictMatchScipy() throws {
        let fixture = try Self.fixture()
        #expect(fixture.ratioScenarios.count == 3)
        #expect(fixture.ratioScenarios.contains { $0.looks.contains(where: \.worse) }, "one scenario is caught")
        for scenario in fixture.ratioScenarios {
            let configuration = Self.configuration(errorRate: scenario.errorRate, guardrails: scenario.guardrails)
            var history = AlwaysValidHistory()
            for look in scenario.looks {
                func arm(_ name: String, _ sums: RatioMetricAggregates) -> VariantAggregates {
                    VariantAggregates(
                        name: name,
                        splitWeight: 1,
                        exposedUnits: look.units,
                        ratioMetrics: ["server_5xx/http_request": sums]
                    )
                }
                history.recordLook(
                    ExperimentAggregates(
                        controlVariant: "comparison",
                        variants: [arm("comparison", look.comparison), arm("treatment", look.treatment)]
                    ),
                    configuration: configuration
                )
                let what = "\(scenario.name) at \(look.units) units per arm"
                let interval = history.sequence(
                    metric: "server_5xx/http_request",
                    measure: .ratio,
                    variant: "treatment"
                )?
                .absoluteInterval
                expectClose(interval?.lower, look.lower, "\(what): lower end", relative: 1e-7, absolute: 1e-12)
                expectClose(interval?.upper, look.upper, "\(what): upper end", relative: 1e-7, absolute: 1e-12)
                let worse =
                    interval.map {
                        OneSidedRegression.isWorse($0, margin: scenario.margin, increaseIsBad: true)
                    } ?? false
                #expect(worse == look.worse, "\(what): the guard says worse = \(worse)")
            }
        }
    }

    @Test func aDecreaseIsBadOnlyBelowTheNegativeMargin() {
        let interval = Interval(lower: -0.05, upper: -0.02)
        #expect(OneSidedRegression.isWorse(interval, margin: 0.01, increaseIsBad: false))
        #expect(!OneSidedRegression.isWorse(interval, margin: 0.03, increaseIsBad: false), "within the margin")
        #expect(!OneSidedRegression.isWorse(interval, margin: 0, increaseIsBad: true), "better, not worse")
        #expect(OneSidedRegression.confidenceLevel(errorRate: 0.05, guardrails: 5) == 1 - 0.01)
    }
}
