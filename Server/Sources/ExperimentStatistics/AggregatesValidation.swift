/// The checks that turn impossible input into a typed error before any statistic is computed.
enum AggregatesValidation {
    static func validate(_ configuration: AnalysisConfiguration) throws(ExperimentStatisticsError) {
        let level = configuration.confidenceLevel
        if !(level > 0 && level < 1) {
            throw .invalidConfiguration(field: "confidenceLevel", value: level, expected: "a number between 0 and 1")
        }
        let threshold = configuration.sampleRatioMismatchThreshold
        if !(threshold > 0 && threshold < 1) {
            throw .invalidConfiguration(
                field: "sampleRatioMismatchThreshold",
                value: threshold,
                expected: "a number between 0 and 1"
            )
        }
        for (field, value) in [
            ("conversionPriorAlpha", configuration.conversionPriorAlpha),
            ("conversionPriorBeta", configuration.conversionPriorBeta),
        ] where !(value >= 1 && value.isFinite) {
            throw .invalidConfiguration(field: field, value: value, expected: "a finite number of at least 1")
        }
        let (field, tau): (String, Double) =
            switch configuration.mixtureVariance {
            case .relativeToControl(let standardDeviation): ("mixtureVariance.standardDeviation", standardDeviation)
            case .absolute(let variance): ("mixtureVariance.variance", variance)
            case .relativeToPooledStandardDeviation(let multiple): ("mixtureVariance.multiple", multiple)
            }
        if !(tau > 0 && tau.isFinite) {
            throw .invalidConfiguration(field: field, value: tau, expected: "a finite number above 0")
        }
    }

    /// Returns the index of the control variant.
    static func validate(_ aggregates: ExperimentAggregates) throws(ExperimentStatisticsError) -> Int {
        let variants = aggregates.variants
        if variants.count < 2 { throw .tooFewVariants(count: variants.count) }
        var seen: Set<String> = []
        for variant in variants {
            if !seen.insert(variant.name).inserted { throw .duplicateVariant(variant.name) }
            try validate(variant)
        }
        guard let control = variants.firstIndex(where: { $0.name == aggregates.controlVariant }) else {
            throw .unknownControl(aggregates.controlVariant)
        }
        if variants[control].exposedUnits == 0 { throw .controlWithoutUnits(variant: aggregates.controlVariant) }
        return control
    }

    private static func validate(_ variant: VariantAggregates) throws(ExperimentStatisticsError) {
        let name = variant.name
        if variant.exposedUnits < 0 { throw .negativeExposedUnits(variant: name, value: variant.exposedUnits) }
        if !(variant.splitWeight > 0 && variant.splitWeight.isFinite) {
            throw .nonPositiveSplitWeight(variant: name, value: variant.splitWeight)
        }
        for (metric, sums) in variant.metrics.sorted(by: { $0.key < $1.key }) {
            if sums.convertedUnits < 0 {
                throw .negativeConvertedUnits(variant: name, metric: metric, value: sums.convertedUnits)
            }
            if sums.convertedUnits > variant.exposedUnits {
                throw .convertedUnitsExceedExposed(
                    variant: name,
                    metric: metric,
                    converted: sums.convertedUnits,
                    exposed: variant.exposedUnits
                )
            }
            try checkSums(
                [("valueSum", sums.valueSum)],
                squares: [("valueSumOfSquares", sums.valueSumOfSquares)],
                variant: name,
                metric: metric
            )
        }
        for (metric, sums) in variant.ratioMetrics.sorted(by: { $0.key < $1.key }) {
            try checkSums(
                [
                    ("numeratorSum", sums.numeratorSum), ("denominatorSum", sums.denominatorSum),
                    ("productSum", sums.productSum),
                ],
                squares: [
                    ("numeratorSumOfSquares", sums.numeratorSumOfSquares),
                    ("denominatorSumOfSquares", sums.denominatorSumOfSquares),
                ],
                variant: name,
                metric: metric
            )
        }
    }

    private static func checkSums(
        _ sums: [(String, Double)],
        squares: [(String, Double)],
        variant: String,
        metric: String
    ) throws(ExperimentStatisticsError) {
        for (field, value) in sums + squares where !value.isFinite {
            throw .nonFiniteSum(variant: variant, metric: metric, field: field, value: value)
        }
        for (field, value) in squares where value < 0 {
            throw .negativeSumOfSquares(variant: variant, metric: metric, field: field, value: value)
        }
    }
}
