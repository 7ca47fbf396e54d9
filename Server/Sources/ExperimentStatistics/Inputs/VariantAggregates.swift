/// One variant's aggregates: its configured share of traffic, the units exposed to it and the sums
/// of each metric over those units.
public struct VariantAggregates: Sendable, Hashable, Codable {
    /// The variant's name, unique within the experiment.
    public var name: String
    /// The configured split weight (e.g. 50 for a 50/50 split); only ratios between weights
    /// matter. Must be positive.
    public var splitWeight: Double
    /// The number of distinct units (randomization ids) exposed to this variant.
    public var exposedUnits: Int
    /// Conversion/value metrics by metric name. A metric missing here has no events yet: zero
    /// converted units and zero sums.
    public var metrics: [String: MetricAggregates]
    /// Ratio metrics (e.g. revenue per session) by metric name; missing means all sums are zero.
    public var ratioMetrics: [String: RatioMetricAggregates]

    /// A variant's aggregates.
    public init(
        name: String,
        splitWeight: Double,
        exposedUnits: Int,
        metrics: [String: MetricAggregates] = [:],
        ratioMetrics: [String: RatioMetricAggregates] = [:]
    ) {
        self.name = name
        self.splitWeight = splitWeight
        self.exposedUnits = exposedUnits
        self.metrics = metrics
        self.ratioMetrics = ratioMetrics
    }
}
