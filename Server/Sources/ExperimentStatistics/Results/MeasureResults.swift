/// What a measure is: every conversion/value metric yields a conversion rate and a mean per unit,
/// every ratio metric one ratio.
public enum Measure: String, Sendable, Hashable, Codable, CaseIterable {
    /// Converted units / exposed units.
    case conversionRate
    /// Σ value / exposed units (units without events count as 0).
    case meanPerUnit
    /// Σ numerator / Σ denominator.
    case ratio
}

/// One measure of one metric: each variant's estimate, and each treatment against control.
public struct MeasureResults: Sendable, Hashable, Codable {
    /// The metric's name.
    public var metric: String
    /// Which measure of the metric.
    public var measure: Measure
    /// Every variant's estimate, control included, in the input's order.
    public var variants: [VariantEstimate]
    /// Every treatment against control, in the input's order; a treatment is missing when its
    /// comparison is undefined (fewer than two units on either side, or a ratio with a zero
    /// denominator sum).
    public var comparisons: [TreatmentComparison]

    /// Values as computed.
    public init(metric: String, measure: Measure, variants: [VariantEstimate], comparisons: [TreatmentComparison]) {
        self.metric = metric
        self.measure = measure
        self.variants = variants
        self.comparisons = comparisons
    }
}

/// The analysis of one experiment: the health check to read first, then every measure.
public struct ExperimentResults: Sendable, Hashable, Codable {
    /// The control variant's name.
    public var controlVariant: String
    /// The sample-ratio-mismatch check against the configured split.
    public var sampleRatioMismatch: SampleRatioMismatch
    /// Every measure, ordered by metric name, then conversion rate, mean per unit, ratio.
    public var measures: [MeasureResults]

    /// Values as computed.
    public init(controlVariant: String, sampleRatioMismatch: SampleRatioMismatch, measures: [MeasureResults]) {
        self.controlVariant = controlVariant
        self.sampleRatioMismatch = sampleRatioMismatch
        self.measures = measures
    }

    /// The results of one measure of one metric, if analysed.
    public func results(metric: String, measure: Measure) -> MeasureResults? {
        measures.first { $0.metric == metric && $0.measure == measure }
    }
}
