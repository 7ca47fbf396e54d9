/// Computes one measure for every variant and compares each treatment with control.
struct MeasureAnalysis {
    let variants: [VariantAggregates]
    /// The index of control in `variants`.
    let control: Int
    let configuration: AnalysisConfiguration

    func conversionRate(metric: String) -> MeasureResults {
        let estimates = variants.map { variant in
            let converted = (variant.metrics[metric] ?? MetricAggregates.zero).convertedUnits
            let computed = VariantEstimators.conversionRate(converted: converted, units: variant.exposedUnits)
            return VariantEstimate(
                variant: variant.name,
                exposedUnits: variant.exposedUnits,
                convertedUnits: converted,
                estimate: computed?.estimate,
                unitVariance: computed?.unitVariance
            )
        }
        return results(metric: metric, measure: .conversionRate, estimates: estimates) { treatment, _ in
            .betaBinomial(
                control: posterior(variants[control], metric: metric),
                treatment: posterior(variants[treatment], metric: metric)
            )
        }
    }

    func meanPerUnit(metric: String) -> MeasureResults {
        let estimates = variants.map { variant in
            let sums = variant.metrics[metric] ?? MetricAggregates.zero
            let computed = VariantEstimators.meanPerUnit(sums, units: variant.exposedUnits)
            return VariantEstimate(
                variant: variant.name,
                exposedUnits: variant.exposedUnits,
                convertedUnits: sums.convertedUnits,
                estimate: computed?.estimate,
                unitVariance: computed?.unitVariance
            )
        }
        return results(metric: metric, measure: .meanPerUnit, estimates: estimates) { _, difference in
            .normal(difference.absolute)
        }
    }

    func ratio(metric: String) -> MeasureResults {
        let estimates = variants.map { variant in
            let computed = VariantEstimators.ratio(
                variant.ratioMetrics[metric] ?? RatioMetricAggregates.zero,
                units: variant.exposedUnits
            )
            return VariantEstimate(
                variant: variant.name,
                exposedUnits: variant.exposedUnits,
                convertedUnits: nil,
                estimate: computed?.estimate,
                unitVariance: computed?.unitVariance
            )
        }
        return results(metric: metric, measure: .ratio, estimates: estimates) { _, difference in
            .normal(difference.absolute)
        }
    }

    /// Beta(α₀ + converted, β₀ + exposed − converted).
    private func posterior(_ variant: VariantAggregates, metric: String) -> BetaDistribution {
        let converted = Double((variant.metrics[metric] ?? MetricAggregates.zero).convertedUnits)
        return BetaDistribution(
            alpha: configuration.conversionPriorAlpha + converted,
            beta: configuration.conversionPriorBeta + Double(variant.exposedUnits) - converted
        )
    }

    private func results(
        metric: String,
        measure: Measure,
        estimates: [VariantEstimate],
        bayesian: (Int, Difference) -> BayesianComparison
    ) -> MeasureResults {
        var comparisons: [TreatmentComparison] = []
        if let controlEstimate = estimates[control].estimate {
            for (index, variant) in estimates.enumerated() where index != control {
                guard let estimate = variant.estimate else { continue }
                let difference = Difference(treatment: estimate, control: controlEstimate)
                comparisons.append(
                    TreatmentComparison(
                        variant: variant.variant,
                        difference: difference,
                        alwaysValid: AlwaysValidTest(
                            difference: difference,
                            controlEstimate: controlEstimate.value,
                            mixture: configuration.mixtureVariance,
                            confidenceLevel: configuration.confidenceLevel
                        ),
                        fixedHorizon: FixedHorizonTest(
                            difference: difference,
                            confidenceLevel: configuration.confidenceLevel
                        ),
                        bayesian: bayesian(index, difference)
                    )
                )
            }
        }
        return MeasureResults(metric: metric, measure: measure, variants: estimates, comparisons: comparisons)
    }
}
