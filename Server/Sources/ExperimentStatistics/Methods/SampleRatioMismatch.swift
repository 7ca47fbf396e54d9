/// The sample-ratio-mismatch check: a chi-square goodness-of-fit test of the exposed units against
/// the configured split. A tiny p-value means assignment or exposure logging is broken, and the
/// experiment's numbers cannot be trusted whatever they say.
public struct SampleRatioMismatch: Sendable, Hashable, Codable {
    /// One variant's observed and expected units.
    public struct VariantCount: Sendable, Hashable, Codable {
        /// The variant.
        public var variant: String
        /// Exposed units observed.
        public var observedUnits: Int
        /// total units × weight / Σ weights.
        public var expectedUnits: Double
    }

    /// The counts behind the statistic, in the variants' order.
    public var variants: [VariantCount]
    /// χ² = Σ (observed − expected)² / expected.
    public var chiSquare: Double
    /// Variants − 1.
    public var degreesOfFreedom: Int
    /// P(χ²ₖ ≥ χ²), the chi-square survival function (regularized upper incomplete gamma).
    public var pValue: Double
    /// The threshold the p-value is compared with.
    public var threshold: Double
    /// Whether pValue < threshold: a mismatch to investigate before reading any result.
    public var isMismatch: Bool

    /// The test of the variants' exposed units against their split weights.
    public init(variants: [VariantAggregates], threshold: Double) {
        let totalUnits = variants.reduce(0.0) { $0 + Double($1.exposedUnits) }
        let totalWeight = variants.reduce(0.0) { $0 + $1.splitWeight }
        var statistic = 0.0
        var counts: [VariantCount] = []
        for variant in variants {
            let expected = totalUnits * variant.splitWeight / totalWeight
            let difference = Double(variant.exposedUnits) - expected
            if expected > 0 { statistic += difference * difference / expected }
            counts.append(
                VariantCount(variant: variant.name, observedUnits: variant.exposedUnits, expectedUnits: expected)
            )
        }
        self.variants = counts
        chiSquare = statistic
        degreesOfFreedom = max(0, variants.count - 1)
        pValue =
            degreesOfFreedom == 0 || totalUnits == 0
            ? 1 : IncompleteGamma.chiSquareSurvival(statistic, degreesOfFreedom: Double(degreesOfFreedom))
        self.threshold = threshold
        isMismatch = pValue < threshold
    }
}
