/// One variant's estimate of one measure (a conversion rate, a mean per unit or a ratio).
public struct VariantEstimate: Sendable, Hashable, Codable {
    /// The variant.
    public var variant: String
    /// Its exposed units.
    public var exposedUnits: Int
    /// Units that converted (conversion rates and means only).
    public var convertedUnits: Int?
    /// The rate, mean or ratio and the variance of that estimate; `nil` when undefined (no units,
    /// or a ratio whose denominator sum is 0).
    public var estimate: Estimate?
    /// The variance of the per-unit values: p(1 − p) for a rate, the sample variance (n − 1) for
    /// a mean, the delta-method linearized variance for a ratio; `nil` when undefined.
    public var unitVariance: Double?
    /// The estimate's confidence interval at the configured level, for describing the variant
    /// (not always valid; decide on the comparisons): Wilson's score interval for a rate, the
    /// normal interval estimate ± z·√variance for a mean per unit and (delta method) a ratio;
    /// `nil` when the estimate is.
    public var interval: Interval?

    /// Values as computed.
    public init(
        variant: String,
        exposedUnits: Int,
        convertedUnits: Int?,
        estimate: Estimate?,
        unitVariance: Double?,
        interval: Interval? = nil
    ) {
        self.variant = variant
        self.exposedUnits = exposedUnits
        self.convertedUnits = convertedUnits
        self.estimate = estimate
        self.unitVariance = unitVariance
        self.interval = interval
    }
}
