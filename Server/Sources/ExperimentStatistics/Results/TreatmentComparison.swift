/// One treatment against control on one measure, by every method; the experiment's configured
/// method decides which one a page shows first.
public struct TreatmentComparison: Sendable, Hashable, Codable {
    /// The treatment variant.
    public var variant: String
    /// treatment − control and treatment / control − 1.
    public var difference: Difference
    /// The always-valid mSPRT p-value and confidence sequences over every look so far: the
    /// default frequentist reading.
    public var alwaysValid: AlwaysValidSequence
    /// The always-valid test at this look alone (what the current sums say by themselves).
    public var latestLook: AlwaysValidTest
    /// The fixed-horizon z-test, for reference.
    public var fixedHorizon: FixedHorizonTest
    /// Chance to beat control and expected losses.
    public var bayesian: BayesianComparison

    /// Values as computed.
    public init(
        variant: String,
        difference: Difference,
        alwaysValid: AlwaysValidSequence,
        latestLook: AlwaysValidTest,
        fixedHorizon: FixedHorizonTest,
        bayesian: BayesianComparison
    ) {
        self.variant = variant
        self.difference = difference
        self.alwaysValid = alwaysValid
        self.latestLook = latestLook
        self.fixedHorizon = fixedHorizon
        self.bayesian = bayesian
    }
}
