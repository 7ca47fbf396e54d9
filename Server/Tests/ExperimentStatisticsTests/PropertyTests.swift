import ExperimentStatistics
import TestSupport
import Testing

/// Properties every result must have, whatever the data.
@Suite struct PropertyTests {
    @Test(arguments: ReferenceFixtures.scenarios)
    func alwaysValidIntervalIsWiderThanFixedHorizon(_ scenario: ReferenceFixtures.Scenario) throws {
        let results = try ExperimentAnalysis.analyze(
            scenario.aggregates,
            configuration: scenario.configuration.analysisConfiguration
        )
        for measure in results.measures {
            for comparison in measure.comparisons {
                let sequence = comparison.alwaysValid.absoluteInterval
                let fixed = comparison.fixedHorizon.absoluteInterval
                #expect(
                    sequence.lower < fixed.lower && fixed.upper < sequence.upper,
                    "\(measure.metric) \(measure.measure)"
                )
                #expect(comparison.alwaysValid.pValue >= comparison.fixedHorizon.pValue)
                let chance = comparison.bayesian.chanceToBeatControl
                #expect(chance >= 0 && chance <= 1)
                // loss of control − loss of treatment = E[T − C] under the posterior.
                let posteriorDifference =
                    measure.measure == .conversionRate
                    ? try posteriorMean(measure, comparison.variant, scenario) - posteriorMean(measure, "", scenario)
                    : comparison.difference.absolute.value
                let losses = comparison.bayesian.expectedLossOfControl - comparison.bayesian.expectedLossOfTreatment
                #expect(isClose(losses, posteriorDifference, relative: 1e-9, absolute: 1e-13))
            }
        }
    }

    /// (α₀ + converted) / (α₀ + β₀ + units) of `variant` ("" for control).
    private func posteriorMean(
        _ measure: MeasureResults,
        _ variant: String,
        _ scenario: ReferenceFixtures.Scenario
    ) throws -> Double {
        let name = variant.isEmpty ? scenario.aggregates.controlVariant : variant
        let estimate = try #require(measure.variants.first { $0.variant == name })
        let prior = scenario.configuration
        let converted = Double(estimate.convertedUnits ?? 0)
        return (prior.priorAlpha + converted) / (prior.priorAlpha + prior.priorBeta + Double(estimate.exposedUnits))
    }

    @Test func sampleRatioMismatchFlagsFiftyFortyFiveNotFiftyFifty() throws {
        let skewed = try ExperimentAnalysis.analyze(
            ExperimentFactory.conversions(control: (50_000, 5_000), treatment: (45_000, 4_500))
        )
        #expect(skewed.sampleRatioMismatch.isMismatch)
        #expect(skewed.sampleRatioMismatch.pValue < 1e-50)
        let even = try ExperimentAnalysis.analyze(
            ExperimentFactory.conversions(control: (50_000, 5_000), treatment: (49_800, 4_980))
        )
        #expect(!even.sampleRatioMismatch.isMismatch)
        #expect(even.sampleRatioMismatch.pValue > 0.1)
        // The same 50/45 counts match a configured 50/45 split.
        let configured = try ExperimentAnalysis.analyze(
            ExperimentFactory.conversions(control: (50_000, 5_000), treatment: (45_000, 4_500), weights: (50, 45))
        )
        #expect(!configured.sampleRatioMismatch.isMismatch)
        #expect(configured.sampleRatioMismatch.chiSquare == 0)
        // Small samples do not flag a 50/45 ratio.
        let small = try ExperimentAnalysis.analyze(ExperimentFactory.conversions(control: (50, 5), treatment: (45, 4)))
        #expect(!small.sampleRatioMismatch.isMismatch)
    }

    @Test func degenerateInputsGiveResultsNotCrashes() throws {
        let inputs: [ExperimentAggregates] = [
            // Zero variance everywhere: every unit converted, the same value.
            ExperimentFactory.conversions(control: (100, 100), treatment: (100, 100)),
            // Nobody converted.
            ExperimentFactory.conversions(control: (100, 0), treatment: (100, 0)),
            // Zero variance on one side only, and a treatment without units.
            ExperimentFactory.conversions(control: (100, 100), treatment: (100, 99)),
            ExperimentFactory.conversions(control: (1, 1), treatment: (0, 0)),
            // Huge sums whose squares overflow the centring.
            ExperimentAggregates(
                controlVariant: "control",
                variants: [
                    ExperimentFactory.variant("control", units: 10, converted: 10, sum: 1e300, sumOfSquares: 1e307),
                    ExperimentFactory.variant("b", units: 10, converted: 1, sum: -1e300, sumOfSquares: 1e308),
                ]
            ),
            // Counts near Int.max.
            ExperimentFactory.conversions(control: (Int.max, Int.max / 2), treatment: (Int.max - 1, Int.max / 3)),
        ]
        for aggregates in inputs {
            let results = try ExperimentAnalysis.analyze(aggregates)
            for measure in results.measures {
                for comparison in measure.comparisons {
                    #expect(!comparison.fixedHorizon.pValue.isNaN)
                    #expect(!comparison.alwaysValid.pValue.isNaN)
                    #expect(!comparison.bayesian.chanceToBeatControl.isNaN)
                }
            }
        }
    }

    @Test func zeroVarianceComparisons() throws {
        let same = try ExperimentAnalysis.analyze(
            ExperimentFactory.conversions(control: (100, 100), treatment: (100, 100))
        )
        let rate = try #require(same.results(metric: "purchase", measure: .conversionRate)?.comparisons.first)
        #expect(rate.fixedHorizon.pValue == 1)
        #expect(rate.alwaysValid.pValue == 1)
        #expect(rate.bayesian.chanceToBeatControl >= 0 && rate.bayesian.chanceToBeatControl <= 1)
    }

    @Test func missingMetricCountsAsNoEvents() throws {
        let aggregates = ExperimentAggregates(
            controlVariant: "control",
            variants: [
                ExperimentFactory.variant("control", units: 1_000, converted: 100, sum: 100, sumOfSquares: 100),
                VariantAggregates(name: "treatment", splitWeight: 1, exposedUnits: 1_000),
            ]
        )
        let results = try ExperimentAnalysis.analyze(aggregates)
        let rate = try #require(results.results(metric: "purchase", measure: .conversionRate))
        #expect(rate.variants[1].convertedUnits == 0)
        #expect(rate.variants[1].estimate?.value == 0)
        #expect(rate.comparisons.first?.difference.relative?.value == -1)
    }

    @Test func recordEventKeepsTheSums() {
        var sums = MetricAggregates(convertedUnits: 0, valueSum: 0, valueSumOfSquares: 0)
        // Unit A: 3 then 4 (total 7); unit B: 10.
        sums.recordEvent(value: 3, previousUnitTotal: nil)
        sums.recordEvent(value: 4, previousUnitTotal: 3)
        sums.recordEvent(value: 10, previousUnitTotal: nil)
        #expect(sums == MetricAggregates(convertedUnits: 2, valueSum: 17, valueSumOfSquares: 149))
    }

    @Test func resultsFollowTheInputOrderAndAreDeterministic() throws {
        let aggregates = ExperimentAggregates(
            controlVariant: "control",
            variants: [
                ExperimentFactory.variant("b", units: 500, converted: 60, sum: 60, sumOfSquares: 60),
                ExperimentFactory.variant("control", units: 500, converted: 50, sum: 50, sumOfSquares: 50),
                ExperimentFactory.variant("a", units: 500, converted: 40, sum: 40, sumOfSquares: 40),
            ]
        )
        let first = try ExperimentAnalysis.analyze(aggregates)
        #expect(first == (try ExperimentAnalysis.analyze(aggregates)))
        #expect(first.measures.map(\.measure) == [.conversionRate, .meanPerUnit])
        let rate = try #require(first.results(metric: "purchase", measure: .conversionRate))
        #expect(rate.variants.map(\.variant) == ["b", "control", "a"])
        #expect(rate.comparisons.map(\.variant) == ["b", "a"])
    }

    @Test func moreDataNarrowsTheConfidenceSequence() throws {
        var widths: [Double] = []
        for scale in [1, 10, 100] {
            let results = try ExperimentAnalysis.analyze(
                ExperimentFactory.conversions(
                    control: (1_000 * scale, 100 * scale),
                    treatment: (1_000 * scale, 110 * scale)
                )
            )
            let comparison = try #require(
                results.results(metric: "purchase", measure: .conversionRate)?.comparisons.first
            )
            widths.append(comparison.alwaysValid.absoluteInterval.width)
        }
        #expect(widths[0] > widths[1] && widths[1] > widths[2])
    }
}
