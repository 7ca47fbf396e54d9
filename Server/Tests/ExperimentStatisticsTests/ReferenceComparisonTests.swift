import ExperimentStatistics
import TestSupport
import Testing

/// Every statistic against scipy/statsmodels on simulated experiments (Fixtures/make_fixtures.py).
@Suite struct ReferenceComparisonTests {
    @Test func fixturesLoad() throws {
        let fixtures = try ReferenceFixtures.load()
        #expect(fixtures.scenarios.count >= 9)
        #expect(fixtures.command.contains("make_fixtures.py"))
    }

    @Test(arguments: ReferenceFixtures.scenarios)
    func scenarioMatchesReference(_ scenario: ReferenceFixtures.Scenario) throws {
        let results = try ExperimentAnalysis.analyze(
            scenario.aggregates,
            configuration: scenario.configuration.analysisConfiguration
        )
        let srm = scenario.expected.sampleRatioMismatch
        expectClose(results.sampleRatioMismatch.chiSquare, srm.chiSquare, "χ²")
        expectClose(results.sampleRatioMismatch.pValue, srm.pValue, "SRM p-value", absolute: 0)
        #expect(results.sampleRatioMismatch.isMismatch == srm.isMismatch)

        #expect(results.measures.count == scenario.expected.measures.count)
        for expected in scenario.expected.measures {
            let measure = try #require(Measure(rawValue: expected.measure))
            let actual = try #require(results.results(metric: expected.metric, measure: measure))
            let label = "\(expected.metric) \(expected.measure)"
            for values in expected.variants {
                let variant = try #require(actual.variants.first { $0.variant == values.variant })
                expectClose(variant.estimate?.value, values.value, "\(label) \(values.variant) value")
                expectClose(variant.estimate?.variance, values.variance, "\(label) \(values.variant) variance")
                expectClose(variant.unitVariance, values.unitVariance, "\(label) \(values.variant) unit variance")
                expectClose(variant.interval?.lower, values.intervalLower, "\(label) \(values.variant) interval lower")
                expectClose(variant.interval?.upper, values.intervalUpper, "\(label) \(values.variant) interval upper")
            }
            #expect(actual.comparisons.count == expected.comparisons.count)
            for values in expected.comparisons {
                let comparison = try #require(actual.comparisons.first { $0.variant == values.variant })
                check(
                    comparison,
                    against: values,
                    level: scenario.configuration.confidenceLevel,
                    label: "\(label) \(values.variant)"
                )
            }
        }
    }

    private func check(
        _ comparison: TreatmentComparison,
        against values: ReferenceFixtures.ComparisonValues,
        level: Double,
        label: String
    ) {
        let difference = comparison.difference
        expectClose(difference.absolute.value, values.difference, "\(label) difference")
        expectClose(difference.absolute.variance, values.differenceVariance, "\(label) difference variance")
        expectClose(difference.relative?.value, values.relativeDifference, "\(label) relative difference")
        expectClose(difference.relative?.variance, values.relativeVariance, "\(label) relative variance")

        let fixed = comparison.fixedHorizon
        expectClose(fixed.zScore, values.zScore, "\(label) z")
        expectClose(fixed.pValue, values.pValue, "\(label) p-value")
        expectClose(fixed.absoluteInterval.lower, values.intervalLower, "\(label) interval lower")
        expectClose(fixed.absoluteInterval.upper, values.intervalUpper, "\(label) interval upper")
        expectClose(fixed.relativeInterval?.lower, values.relativeIntervalLower, "\(label) relative interval lower")
        expectClose(fixed.relativeInterval?.upper, values.relativeIntervalUpper, "\(label) relative interval upper")

        // Without earlier looks the running reading is this look's (every look here is informative).
        let look = comparison.latestLook
        #expect(look.isInformative, "\(label)")
        #expect(comparison.alwaysValid == AlwaysValidSequence.beforeAnyLook.adding(look), "\(label)")
        expectClose(look.pValue, values.alwaysValidPValue, "\(label) always-valid p-value")
        expectClose(look.absoluteInterval.lower, values.sequenceLower, "\(label) sequence lower")
        expectClose(look.absoluteInterval.upper, values.sequenceUpper, "\(label) sequence upper")
        let relative = look.relativeInterval
        expectClose(relative?.lower, values.relativeSequenceLower ?? -.infinity, "\(label) relative sequence lower")
        expectClose(relative?.upper, values.relativeSequenceUpper ?? .infinity, "\(label) relative sequence upper")
        // The relative sequence is the p-value's dual: it excludes 0 exactly when p < α.
        let alpha = 1 - level
        #expect((relative?.contains(0) ?? true) == (look.pValue >= alpha), "\(label)")
        #expect(look.absoluteInterval.contains(0) == (look.pValue >= alpha), "\(label)")

        let bayesian = comparison.bayesian
        expectClose(bayesian.chanceToBeatControl, values.chanceToBeatControl, "\(label) chance to beat control")
        expectClose(bayesian.expectedLossOfTreatment, values.expectedLossOfTreatment, "\(label) loss of treatment")
        expectClose(bayesian.expectedLossOfControl, values.expectedLossOfControl, "\(label) loss of control")
    }
}
