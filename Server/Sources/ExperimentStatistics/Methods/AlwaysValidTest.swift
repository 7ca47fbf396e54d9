import Foundation

/// One look of the mixture sequential probability ratio test (mSPRT) with a normal mixture —
/// Johari, Pekelis and Walsh, "Always Valid Inference" (2017/2022), as used by Optimizely and
/// Eppo — computed from the aggregates as they are now. What results report is the running
/// reading over every look (``AlwaysValidSequence``); this is one term of it.
///
/// For an estimated difference d with variance V and mixture variance τ², the likelihood ratio of
/// "difference θ" against θ₀ is
///
///     Λ(θ₀) = √(V / (V + τ²)) · exp( τ² (d − θ₀)² / (2 V (V + τ²)) )
///
/// the look's p-value is min(1, 1/Λ(0)) and its confidence set {θ₀ : Λ(θ₀) < 1/α} is
///
///     d ± √(V · G),   G = (V + τ²) / τ² · ( log((V + τ²) / V) + 2 log(1/α) ).
///
/// The relative difference r = T / C − 1 gets the same test's dual: r is in the set when the
/// mSPRT of the contrast T − (1 + r)·C (variance V_T + (1 + r)²·V_C, mixture scaled with that
/// variance, so the critical value √G is the absolute test's) does not reject — Fieller's
/// interval with √G for the normal quantile. At r = 0 the contrast is the absolute difference,
/// so the relative set excludes 0 exactly when the p-value is below α. While control's estimate
/// is not clearly away from 0 the set is no interval (two half-lines, or the whole line) and is
/// reported unbounded.
public struct AlwaysValidTest: Sendable, Hashable, Codable {
    /// τ² used for the absolute difference.
    public var mixtureVariance: Double
    /// The look's p-value min(1, 1/Λ(0)).
    public var pValue: Double
    /// The look's confidence set for the absolute difference at the configured level.
    public var absoluteInterval: Interval
    /// The look's confidence set for the relative difference (unbounded while control's estimate
    /// is not clearly away from 0); `nil` when control's estimate is 0.
    public var relativeInterval: Interval?
    /// Whether the look tells anything: both variants' estimates have a positive, finite variance
    /// and τ² > 0. Before that (with Wald's rate variance every unit of a variant converted, or
    /// none did; or all its values are equal) the normal approximation has nothing to go on, and
    /// the look would claim a certainty (p = 0, an interval of width 0) that no later look could
    /// undo. Agresti–Caffo's rate variance (``RateVariance``) is never 0.
    public var isInformative: Bool

    /// The test of treatment − control against 0 with mixture variance `tau2` for the absolute
    /// difference (``MixtureVariance`` says how it is chosen).
    public init(
        treatment: Estimate,
        control: Estimate,
        mixtureVariance tau2: Double,
        confidenceLevel: Double
    ) {
        let alpha = 1 - confidenceLevel
        let difference = Difference(treatment: treatment, control: control)
        mixtureVariance = tau2
        pValue = Self.pValue(difference.absolute, mixtureVariance: tau2)
        absoluteInterval = Self.confidenceSequence(difference.absolute, mixtureVariance: tau2, alpha: alpha)
        relativeInterval =
            difference.relative == nil
            ? nil : Self.relativeSequence(treatment: treatment, control: control, mixtureVariance: tau2, alpha: alpha)
        let variances = [treatment.variance, control.variance]
        isInformative = variances.allSatisfy { $0 > 0 && $0.isFinite } && tau2 > 0 && tau2.isFinite
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

    /// G = (V + τ²)/τ² · (log((V + τ²)/V) + 2 log(1/α)): the squared critical value of the look.
    static func criticalSquare(variance v: Double, mixtureVariance tau2: Double, alpha: Double) -> Double {
        (v + tau2) / tau2 * (log1p(tau2 / v) - 2 * log(alpha))
    }

    /// d ± √(V · G).
    static func confidenceSequence(_ estimate: Estimate, mixtureVariance tau2: Double, alpha: Double) -> Interval {
        let v = estimate.variance
        let d = estimate.value
        guard tau2 > 0, tau2.isFinite, v.isFinite else { return .unbounded }
        if v == 0 { return Interval(lower: d, upper: d) }
        let squared = v * criticalSquare(variance: v, mixtureVariance: tau2, alpha: alpha)
        return Interval(center: d, halfWidth: squared.squareRoot())
    }

    /// {r : (T − (1 + r)·C)² < G·(V_T + (1 + r)²·V_C)}, with u = 1 + r:
    /// (C² − G·V_C)·u² − 2TC·u + T² − G·V_T < 0. Bounded when C² > G·V_C (control clearly away
    /// from 0 at this level); otherwise the set reaches to infinity and the interval is unbounded.
    static func relativeSequence(
        treatment: Estimate,
        control: Estimate,
        mixtureVariance tau2: Double,
        alpha: Double
    ) -> Interval {
        let (t, c) = (treatment.value, control.value)
        let (vt, vc) = (treatment.variance, control.variance)
        let v = vt + vc
        guard tau2 > 0, tau2.isFinite, v.isFinite else { return .unbounded }
        if v == 0 { return Interval(lower: t / c - 1, upper: t / c - 1) }
        let g = criticalSquare(variance: v, mixtureVariance: tau2, alpha: alpha)
        let a = c * c - g * vc
        let inside = g * (t * t * vc + c * c * vt - g * vt * vc)
        guard a > 0, inside >= 0, a.isFinite, inside.isFinite else { return .unbounded }
        let half = inside.squareRoot()
        return Interval(lower: (t * c - half) / a - 1, upper: (t * c + half) / a - 1)
    }
}
