import ExperimentStatistics
import Testing

/// Impossible input is a typed error naming the variant and metric, never a crash.
@Suite struct ValidationErrorTests {
    private func error(
        _ aggregates: ExperimentAggregates,
        _ configuration: AnalysisConfiguration = AnalysisConfiguration()
    ) -> ExperimentStatisticsError? {
        do {
            _ = try ExperimentAnalysis.analyze(aggregates, configuration: configuration)
            return nil
        } catch {
            return error
        }
    }

    private func experiment(_ variants: [VariantAggregates], control: String = "control") -> ExperimentAggregates {
        ExperimentAggregates(controlVariant: control, variants: variants)
    }

    @Test func negativeExposedUnits() {
        let found = error(
            experiment([
                .init(name: "control", splitWeight: 1, exposedUnits: 10),
                .init(name: "b", splitWeight: 1, exposedUnits: -3),
            ])
        )
        #expect(found == .negativeExposedUnits(variant: "b", value: -3))
        #expect(found?.description == "variant 'b' has -3 exposed units; expected 0 or more")
    }

    @Test func convertedUnitsAboveExposed() {
        let found = error(ExperimentFactory.conversions(control: (10, 2), treatment: (10, 11)))
        #expect(
            found == .convertedUnitsExceedExposed(variant: "treatment", metric: "purchase", converted: 11, exposed: 10)
        )
        #expect(found?.description.contains("metric 'purchase' of variant 'treatment'") == true)
        #expect(found?.description.contains("expected at most 10") == true)
    }

    @Test func negativeConvertedUnits() {
        let found = error(ExperimentFactory.conversions(control: (10, -1), treatment: (10, 1)))
        #expect(found == .negativeConvertedUnits(variant: "control", metric: "purchase", value: -1))
    }

    @Test func controlWithoutUnits() {
        let found = error(ExperimentFactory.conversions(control: (0, 0), treatment: (10, 1)))
        #expect(found == .controlWithoutUnits(variant: "control"))
    }

    @Test(arguments: [0.0, -1, .nan, .infinity])
    func splitWeightMustBePositive(weight: Double) {
        let found = error(ExperimentFactory.conversions(control: (10, 1), treatment: (10, 1), weights: (1, weight)))
        guard case .nonPositiveSplitWeight(let variant, _) = found else {
            Issue.record("expected nonPositiveSplitWeight, got \(String(describing: found))")
            return
        }
        #expect(variant == "treatment")
    }

    @Test func nonFiniteAndNegativeSums() {
        let nan = error(
            experiment([
                ExperimentFactory.variant("control", units: 10, sum: .nan), ExperimentFactory.variant("b", units: 5),
            ])
        )
        guard case .nonFiniteSum(let variant, let metric, let field, _) = nan else {
            Issue.record("expected nonFiniteSum, got \(String(describing: nan))")
            return
        }
        #expect((variant, metric, field) == ("control", "purchase", "valueSum"))
        let negative = error(
            experiment([
                ExperimentFactory.variant("control", units: 10),
                ExperimentFactory.variant("b", units: 5, sumOfSquares: -1),
            ])
        )
        #expect(
            negative == .negativeSumOfSquares(variant: "b", metric: "purchase", field: "valueSumOfSquares", value: -1)
        )
        let ratio = VariantAggregates(
            name: "b",
            splitWeight: 1,
            exposedUnits: 5,
            ratioMetrics: [
                "rps": RatioMetricAggregates(
                    numeratorSum: 1,
                    denominatorSum: .infinity,
                    numeratorSumOfSquares: 1,
                    denominatorSumOfSquares: 1,
                    productSum: 1
                )
            ]
        )
        let infinite = error(experiment([ExperimentFactory.variant("control", units: 10), ratio]))
        #expect(infinite == .nonFiniteSum(variant: "b", metric: "rps", field: "denominatorSum", value: .infinity))
    }

    @Test func variantsAndControl() {
        #expect(error(experiment([ExperimentFactory.variant("control", units: 3)])) == .tooFewVariants(count: 1))
        #expect(
            error(
                experiment([
                    ExperimentFactory.variant("control", units: 3), ExperimentFactory.variant("control", units: 3),
                ])
            )
                == .duplicateVariant("control")
        )
        #expect(
            error(
                experiment(
                    [ExperimentFactory.variant("a", units: 3), ExperimentFactory.variant("b", units: 3)],
                    control: "c"
                )
            )
                == .unknownControl("c")
        )
    }

    @Test func configuration() {
        let aggregates = ExperimentFactory.conversions(control: (10, 1), treatment: (10, 1))
        let cases: [(AnalysisConfiguration, String)] = [
            (AnalysisConfiguration(confidenceLevel: 1), "confidenceLevel"),
            (AnalysisConfiguration(confidenceLevel: .nan), "confidenceLevel"),
            (AnalysisConfiguration(mixtureVariance: .absolute(variance: 0)), "mixtureVariance.variance"),
            (
                AnalysisConfiguration(mixtureVariance: .relativeToControl(standardDeviation: -1)),
                "mixtureVariance.standardDeviation"
            ),
            (AnalysisConfiguration(conversionPriorAlpha: 0.5), "conversionPriorAlpha"),
            (AnalysisConfiguration(conversionPriorBeta: .infinity), "conversionPriorBeta"),
            (AnalysisConfiguration(sampleRatioMismatchThreshold: 0), "sampleRatioMismatchThreshold"),
        ]
        for (configuration, field) in cases {
            guard case .invalidConfiguration(let found, _, _) = error(aggregates, configuration) else {
                Issue.record("expected invalidConfiguration for \(field)")
                continue
            }
            #expect(found == field)
        }
    }
}
