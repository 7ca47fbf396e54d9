import Foundation

/// The mixture sequential probability ratio test (mSPRT) with a normal mixture — Johari, Pekelis
/// and Walsh, "Always Valid Inference" (2017/2022), as used by Optimizely and Eppo. Its p-value
/// and interval stay valid however often the results are looked at and whenever the experiment is
/// stopped.
///
/// For an estimated difference d with variance V and mixture variance τ², the likelihood ratio of
/// "difference θ" against θ₀ is
///
///     Λ(θ₀) = √(V / (V + τ²)) · exp( τ² (d − θ₀)² / (2 V (V + τ²)) )
///
/// the always-valid p-value is min(1, 1/Λ(0)) and the confidence sequence {θ₀ : Λ(θ₀) < 1/α} is
///
///     d ± √( V (V + τ²) / τ² · ( log((V + τ²) / V) + 2 log(1/α) ) )
///
/// Computed from the current aggregates, the p-value is that of the latest look; the running
/// minimum over earlier looks (which callers may keep) is also always valid and never larger.
public struct AlwaysValidTest: Sendable, Hashable, Codable {
    /// τ² used for the absolute difference.
    public var mixtureVariance: Double
    /// The always-valid p-value min(1, 1/Λ(0)).
    public var pValue: Double
    /// The confidence sequence for the absolute difference at the configured level.
    public var absoluteInterval: Interval
    /// The confidence sequence for the relative difference (delta-method variance, mixture
    /// variance τ² / control²); `nil` when control's estimate is 0.
    public var relativeInterval: Interval?

    /// The test of `difference` against 0.
    public init(
        difference: Difference,
        controlEstimate: Double,
        mixture: MixtureVariance,
        confidenceLevel: Double
    ) {
        let alpha = 1 - confidenceLevel
        let tau2 = mixture.absoluteVariance(controlEstimate: controlEstimate)
        mixtureVariance = tau2
        pValue = Self.pValue(difference.absolute, mixtureVariance: tau2)
        absoluteInterval = Self.confidenceSequence(difference.absolute, mixtureVariance: tau2, alpha: alpha)
        relativeInterval = difference.relative.map {
            Self.confidenceSequence(
                $0,
                mixtureVariance: mixture.relativeVariance(controlEstimate: controlEstimate),
                alpha: alpha
            )
        }
    }

    /// min(1, 1/Λ(0)), computed in logs.
    static func pValue(_ estimate: Estimate, mixtureVariance tau2: Double) -> Double {
        let v = estimate.variance
        let d = estimate.value
        guard tau2 > 0, tau2.isFinite, v.isFinite else { return 1 }
        if v == 0 { return d == 0 ? 1 : 0 }
        let logRatio = -0.5 * log1p(tau2 / v) + tau2 * d * d / (2 * v * (v + tau2))
        if logRatio.isNaN { return 1 }
        return min(1, exp(-logRatio))
    }

    /// d ± √(V (V + τ²)/τ² · (log((V + τ²)/V) + 2 log(1/α))).
    static func confidenceSequence(_ estimate: Estimate, mixtureVariance tau2: Double, alpha: Double) -> Interval {
        let v = estimate.variance
        let d = estimate.value
        guard tau2 > 0, tau2.isFinite, v.isFinite else { return Interval(lower: -.infinity, upper: .infinity) }
        if v == 0 { return Interval(lower: d, upper: d) }
        let squared = v * (v + tau2) / tau2 * (log1p(tau2 / v) - 2 * log(alpha))
        return Interval(center: d, halfWidth: squared.squareRoot())
    }
}
