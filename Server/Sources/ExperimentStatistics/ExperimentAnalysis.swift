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
    /// - Parameter history: The experiment's running always-valid readings from earlier looks
    ///   (``AlwaysValidHistory``); this look joins them. Without one, the always-valid reading is
    ///   this look's alone.
    /// - Throws: ``ExperimentStatisticsError`` when the aggregates or the configuration are
    ///   impossible; never crashes on any input.
    public static func analyze(
        _ aggregates: ExperimentAggregates,
        configuration: AnalysisConfiguration = AnalysisConfiguration(),
        history: AlwaysValidHistory = AlwaysValidHistory()
    ) throws(ExperimentStatisticsError) -> ExperimentResults {
        try AggregatesValidation.validate(configuration)
        let control = try AggregatesValidation.validate(aggregates)
        let variants = aggregates.variants
        let mismatch = SampleRatioMismatch(
            variants: variants,
            threshold: configuration.sampleRatioMismatchThreshold
        )
        let analysis = MeasureAnalysis(variants: variants, control: control, configuration: configuration)
        return ExperimentResults(
            controlVariant: aggregates.controlVariant,
            sampleRatioMismatch: mismatch,
            measures: analysis.measures().map {
                analysis.results(metric: $0.metric, measure: $0.measure, history: history)
            }
        )
    }
}
