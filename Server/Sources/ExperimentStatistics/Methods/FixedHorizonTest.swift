/// The classical two-sided z-test and Wald interval, valid only when the sample size was fixed in
/// advance and the results are read once. Shown for reference beside the always-valid test.
public struct FixedHorizonTest: Sendable, Hashable, Codable {
    /// estimate / standard error (±∞ when the standard error is 0 and the estimate is not).
    public var zScore: Double
    /// The two-sided p-value 2·(1 − Φ(|z|)).
    public var pValue: Double
    /// estimate ± z₁₋α/₂ · standard error for the absolute difference.
    public var absoluteInterval: Interval
    /// The same for the relative difference; `nil` when control's estimate is 0.
    public var relativeInterval: Interval?

    /// The test of `difference` against 0 at the given confidence level.
    public init(difference: Difference, confidenceLevel: Double) {
        let critical = NormalDistribution.quantile(0.5 + confidenceLevel / 2)
        let (z, p) = Self.zTest(difference.absolute)
        zScore = z
        pValue = p
        absoluteInterval = Self.interval(difference.absolute, critical: critical)
        relativeInterval = difference.relative.map { Self.interval($0, critical: critical) }
    }

    static func zTest(_ estimate: Estimate) -> (z: Double, p: Double) {
        let se = estimate.standardError
        if se == 0 || !se.isFinite {
            if estimate.value == 0 || !se.isFinite { return (0, 1) }
            return (estimate.value > 0 ? .infinity : -.infinity, 0)
        }
        let z = estimate.value / se
        return (z, min(1, 2 * NormalDistribution.survival(abs(z))))
    }

    private static func interval(_ estimate: Estimate, critical: Double) -> Interval {
        Interval(center: estimate.value, halfWidth: critical * estimate.standardError)
    }
}
