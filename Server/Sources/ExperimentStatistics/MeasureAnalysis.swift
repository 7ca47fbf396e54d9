/// Computes one measure for every variant and compares each treatment with control.
struct MeasureAnalysis {
    let variants: [VariantAggregates]
    /// The index of control in `variants`.
    let control: Int
    let configuration: AnalysisConfiguration

    /// Every measure the aggregates have, ordered by metric name, then conversion rate, mean per
    /// unit, ratio: each conversion/value metric's rate and mean, each ratio metric's ratio.
    func measures() -> [(metric: String, measure: Measure)] {
        var measures: [(metric: String, measure: Measure)] = []
        for name in Set(variants.flatMap(\.metrics.keys)) {
            measures.append((name, .conversionRate))
            measures.append((name, .meanPerUnit))
        }
        for name in Set(variants.flatMap(\.ratioMetrics.keys)) {
            measures.append((name, .ratio))
        }
        return measures.sorted { ($0.metric, Self.order($0.measure)) < ($1.metric, Self.order($1.measure)) }
    }

    private static func order(_ measure: Measure) -> Int {
        Measure.allCases.firstIndex(of: measure) ?? 0
    }

    /// z₁₋α/₂ of the configured level.
    private var critical: Double { NormalDistribution.quantile(0.5 + configuration.confidenceLevel / 2) }

    /// Every variant's estimate of the measure, with its interval.
    func estimates(metric: String, measure: Measure) -> [VariantEstimate] {
        let z = critical
        return variants.map { variant in
            switch measure {
            case .conversionRate:
                let converted = (variant.metrics[metric] ?? MetricAggregates.zero).convertedUnits
                let computed = VariantEstimators.conversionRate(
                    converted: converted,
                    units: variant.exposedUnits,
                    variance: configuration.rateVariance
                )
                return VariantEstimate(
                    variant: variant.name,
                    exposedUnits: variant.exposedUnits,
                    convertedUnits: converted,
                    estimate: computed?.estimate,
                    unitVariance: computed?.unitVariance,
                    interval: VariantEstimators.wilsonInterval(
                        converted: converted,
                        units: variant.exposedUnits,
                        critical: z
                    )
                )
            case .meanPerUnit:
                let sums = variant.metrics[metric] ?? MetricAggregates.zero
                let computed = VariantEstimators.meanPerUnit(sums, units: variant.exposedUnits)
                return VariantEstimate(
                    variant: variant.name,
                    exposedUnits: variant.exposedUnits,
                    convertedUnits: sums.convertedUnits,
                    estimate: computed?.estimate,
                    unitVariance: computed?.unitVariance,
                    interval: computed.map { VariantEstimators.normalInterval($0.estimate, critical: z) }
                )
            case .ratio:
                let computed = VariantEstimators.ratio(
                    variant.ratioMetrics[metric] ?? RatioMetricAggregates.zero,
                    units: variant.exposedUnits
                )
                return VariantEstimate(
                    variant: variant.name,
                    exposedUnits: variant.exposedUnits,
                    convertedUnits: nil,
                    estimate: computed?.estimate,
                    unitVariance: computed?.unitVariance,
                    interval: computed.map { VariantEstimators.normalInterval($0.estimate, critical: z) }
                )
            }
        }
    }

    /// Each treatment whose comparison is defined, with its estimate and control's.
    private func pairs(_ estimates: [VariantEstimate]) -> [(index: Int, treatment: Estimate, control: Estimate)] {
        guard let controlEstimate = estimates[control].estimate else { return [] }
        return estimates.enumerated().compactMap { index, variant in
            guard index != control, let estimate = variant.estimate else { return nil }
            return (index, estimate, controlEstimate)
        }
    }

    private func alwaysValidLook(
        treatment: Estimate,
        control controlEstimate: Estimate,
        metric: String,
        measure: Measure,
        index: Int
    ) -> AlwaysValidTest {
        let tau2 = configuration.mixtureVariance.absoluteVariance(
            controlEstimate: controlEstimate.value,
            pooledUnitVariance: pooledUnitVariance(metric: metric, measure: measure, treatment: index)
        )
        return AlwaysValidTest(
            treatment: treatment,
            control: controlEstimate,
            mixtureVariance: tau2,
            confidenceLevel: configuration.confidenceLevel
        )
    }

    /// The per-unit variance of treatment `index`'s and control's units taken as one sample,
    /// computed as each arm's is (a rate's with the configured ``RateVariance``); 0 when it is
    /// not defined.
    private func pooledUnitVariance(metric: String, measure: Measure, treatment index: Int) -> Double {
        let arms = [variants[index], variants[control]]
        let units = Self.sum(arms.map(\.exposedUnits))
        let computed: (estimate: Estimate, unitVariance: Double)?
        switch measure {
        case .conversionRate:
            computed = VariantEstimators.conversionRate(
                converted: Self.sum(arms.map { ($0.metrics[metric] ?? MetricAggregates.zero).convertedUnits }),
                units: units,
                variance: configuration.rateVariance
            )
        case .meanPerUnit:
            let sums = arms.map { $0.metrics[metric] ?? MetricAggregates.zero }
            let pooled = MetricAggregates(
                convertedUnits: Self.sum(sums.map(\.convertedUnits)),
                valueSum: sums.map(\.valueSum).reduce(0, +),
                valueSumOfSquares: sums.map(\.valueSumOfSquares).reduce(0, +)
            )
            computed = VariantEstimators.meanPerUnit(pooled, units: units)
        case .ratio:
            let sums = arms.map { $0.ratioMetrics[metric] ?? RatioMetricAggregates.zero }
            let pooled = RatioMetricAggregates(
                numeratorSum: sums.map(\.numeratorSum).reduce(0, +),
                denominatorSum: sums.map(\.denominatorSum).reduce(0, +),
                numeratorSumOfSquares: sums.map(\.numeratorSumOfSquares).reduce(0, +),
                denominatorSumOfSquares: sums.map(\.denominatorSumOfSquares).reduce(0, +),
                productSum: sums.map(\.productSum).reduce(0, +)
            )
            computed = VariantEstimators.ratio(pooled, units: units)
        }
        return computed?.unitVariance ?? 0
    }

    /// A sum of counts that saturates rather than trapping (counts saturate at Int.max as kept).
    private static func sum(_ counts: [Int]) -> Int {
        counts.reduce(0) { total, count in
            let (next, overflow) = total.addingReportingOverflow(count)
            return overflow ? Int.max : next
        }
    }

    /// This look's always-valid test of every treatment, without the other readings.
    func alwaysValidLooks(metric: String, measure: Measure) -> [(variant: String, look: AlwaysValidTest)] {
        pairs(estimates(metric: metric, measure: measure)).map {
            (
                variants[$0.index].name,
                alwaysValidLook(
                    treatment: $0.treatment,
                    control: $0.control,
                    metric: metric,
                    measure: measure,
                    index: $0.index
                )
            )
        }
    }

    /// The measure's estimates and comparisons; the always-valid reading joins this look to the
    /// comparison's running reading in `history`.
    func results(metric: String, measure: Measure, history: AlwaysValidHistory) -> MeasureResults {
        let estimates = estimates(metric: metric, measure: measure)
        let comparisons = pairs(estimates).map { index, treatment, control in
            let name = variants[index].name
            let difference = Difference(treatment: treatment, control: control)
            let look = alwaysValidLook(
                treatment: treatment,
                control: control,
                metric: metric,
                measure: measure,
                index: index
            )
            let running = history.sequence(metric: metric, measure: measure, variant: name) ?? .beforeAnyLook
            return TreatmentComparison(
                variant: name,
                difference: difference,
                alwaysValid: running.adding(look),
                latestLook: look,
                fixedHorizon: FixedHorizonTest(difference: difference, confidenceLevel: configuration.confidenceLevel),
                bayesian: measure == .conversionRate
                    ? .betaBinomial(
                        control: posterior(variants[self.control], metric: metric),
                        treatment: posterior(variants[index], metric: metric)
                    )
                    : .normal(difference.absolute)
            )
        }
        return MeasureResults(metric: metric, measure: measure, variants: estimates, comparisons: comparisons)
    }

    /// Beta(α₀ + converted, β₀ + exposed − converted).
    private func posterior(_ variant: VariantAggregates, metric: String) -> BetaDistribution {
        let converted = Double((variant.metrics[metric] ?? MetricAggregates.zero).convertedUnits)
        return BetaDistribution(
            alpha: configuration.conversionPriorAlpha + converted,
            beta: configuration.conversionPriorBeta + Double(variant.exposedUnits) - converted
        )
    }
}
