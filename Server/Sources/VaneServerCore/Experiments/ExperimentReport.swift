package import ExperimentStatistics
import VaneCore

/// An experiment's results, computed once from its sums: the health checks with their warnings,
/// and the analysis. `GET …/results` writes it as JSON (``ExperimentResultsJSON``) and the
/// console as a page with charts, so both say the same thing in the same words.
package struct ExperimentReport: Sendable {
    package let experiment: Experiment
    package let aggregates: ExperimentAggregates
    /// Nil while it cannot be computed (no unit in control yet): ``notice`` says why.
    package let analysis: ExperimentResults?
    package let notice: String?
    /// Computed even without the analysis: exposures to every variant but control are exactly
    /// the mismatch to report early. Nil before any exposure.
    package let sampleRatioMismatch: SampleRatioMismatch?
    package let unitsInSeveralVariants: Int
    package let exposuresWithoutFetch: Int
    /// Sentences to show above the numbers, the sample-ratio mismatch first; empty when every
    /// check passes.
    package let warnings: [String]

    /// - Parameter history: The experiment's running always-valid readings, kept as events
    ///   arrived (``ExperimentTallyStore``); the always-valid figures are those, not this look's.
    package init(_ experiment: Experiment, tally: ExperimentTally, history: AlwaysValidHistory = AlwaysValidHistory()) {
        self.experiment = experiment
        let aggregates = tally.aggregates(for: experiment.definition)
        self.aggregates = aggregates
        let configuration = experiment.definition.analysisConfiguration
        do {
            analysis = try ExperimentAnalysis.analyze(aggregates, configuration: configuration, history: history)
            notice = nil
        } catch {
            analysis = nil
            notice = Self.notice(error)
        }
        let health = ExperimentHealth(
            aggregates: aggregates,
            tally: tally,
            threshold: configuration.sampleRatioMismatchThreshold
        )
        sampleRatioMismatch = health.sampleRatioMismatch
        unitsInSeveralVariants = health.unitsInSeveralVariants
        exposuresWithoutFetch = health.exposuresWithoutFetch
        warnings = health.warnings
    }

    package var definition: ExperimentDefinition { experiment.definition }

    /// "95 %", "99.5 %": the experiment's confidence level as pages and tables name it.
    package static func levelText(_ level: Double) -> String {
        let percent = (level * 1_000).rounded() / 10
        return percent == percent.rounded() ? "\(Int(percent)) %" : "\(percent) %"
    }

    /// The measures a metric is read by: the first is the one it is decided on.
    package static func measures(of metric: ExperimentMetric) -> [Measure] {
        switch metric.kind {
        case .conversion: [.conversionRate, .meanPerUnit]
        case .mean: [.meanPerUnit, .conversionRate]
        case .ratio: [.ratio]
        }
    }

    /// A metric's measures with their results, the deciding one first; empty without analysis.
    package func measures(of metric: ExperimentMetric) -> [MeasureResults] {
        Self.measures(of: metric).compactMap { analysis?.results(metric: metric.name, measure: $0) }
    }

    private static func notice(_ error: ExperimentStatisticsError) -> String {
        switch error {
        case .controlWithoutUnits(let variant):
            "no results yet: no unit has been exposed to the control variant \"\(variant)\""
        default:
            "the results cannot be computed: \(error)"
        }
    }

    /// "= 0.0123", or "< 0.0001" for the tiny p-values a real mismatch gives.
    package static func pValueText(_ value: Double) -> String {
        value < 0.0001 ? "< 0.0001" : "= \((value * 10_000).rounded() / 10_000)"
    }
}
