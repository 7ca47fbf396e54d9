/// The entry point: validates an experiment's aggregates and computes every statistic.
///
/// ```swift
/// let results = try ExperimentAnalysis.analyze(aggregates)
/// if results.sampleRatioMismatch.isMismatch { … show the warning first … }
/// let checkout = results.results(metric: "checkout", measure: .conversionRate)
/// ```
///
/// Pure and deterministic: no I/O, no randomness, the same aggregates always give the same
/// results. The cost does not depend on the number of events, only on variants × metrics.
public enum ExperimentAnalysis {
    /// Every measure of every metric for every treatment against control, and the
    /// sample-ratio-mismatch check.
    ///
    /// - Throws: ``ExperimentStatisticsError`` when the aggregates or the configuration are
    ///   impossible; never crashes on any input.
    public static func analyze(
        _ aggregates: ExperimentAggregates,
        configuration: AnalysisConfiguration = AnalysisConfiguration()
    ) throws(ExperimentStatisticsError) -> ExperimentResults {
        try AggregatesValidation.validate(configuration)
        let control = try AggregatesValidation.validate(aggregates)
        let variants = aggregates.variants
        let mismatch = SampleRatioMismatch(
            variants: variants,
            threshold: configuration.sampleRatioMismatchThreshold
        )
        var measures: [MeasureResults] = []
        let metricNames = Set(variants.flatMap(\.metrics.keys)).sorted()
        let ratioNames = Set(variants.flatMap(\.ratioMetrics.keys)).sorted()
        let analysis = MeasureAnalysis(variants: variants, control: control, configuration: configuration)
        for name in metricNames {
            measures.append(analysis.conversionRate(metric: name))
            measures.append(analysis.meanPerUnit(metric: name))
        }
        for name in ratioNames {
            measures.append(analysis.ratio(metric: name))
        }
        measures.sort { ($0.metric, order($0.measure)) < ($1.metric, order($1.measure)) }
        return ExperimentResults(
            controlVariant: aggregates.controlVariant,
            sampleRatioMismatch: mismatch,
            measures: measures
        )
    }

    private static func order(_ measure: Measure) -> Int {
        Measure.allCases.firstIndex(of: measure) ?? 0
    }
}
