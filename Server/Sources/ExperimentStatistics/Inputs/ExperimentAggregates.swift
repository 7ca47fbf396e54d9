/// Everything the statistics need about one experiment: per variant, the exposed units and the
/// running sums of each metric, kept as events arrive — never raw events.
public struct ExperimentAggregates: Sendable, Hashable, Codable {
    /// The name of the control variant, which every other variant is compared with.
    public var controlVariant: String
    /// The variants, control included, in the order results list them.
    public var variants: [VariantAggregates]

    /// Aggregates for the given variants, one of which is `controlVariant`.
    public init(controlVariant: String, variants: [VariantAggregates]) {
        self.controlVariant = controlVariant
        self.variants = variants
    }
}
