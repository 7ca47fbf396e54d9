/// The choices an experiment makes about its analysis. The defaults suit most experiments.
public struct AnalysisConfiguration: Sendable, Hashable, Codable {
    /// The coverage of every interval, 0.95 by default (α = 0.05 for the p-values' threshold).
    public var confidenceLevel: Double
    /// The variance τ² of the normal mixture in the always-valid (mSPRT) test.
    public var mixtureVariance: MixtureVariance
    /// How a conversion rate's variance is estimated for the comparisons: Wald's by default.
    public var rateVariance: RateVariance
    /// The Beta(α, β) prior of every conversion rate, Beta(1, 1) (uniform) by default.
    public var conversionPriorAlpha: Double
    /// See ``conversionPriorAlpha``.
    public var conversionPriorBeta: Double
    /// A sample-ratio-mismatch p-value below this flags the experiment, 0.001 by default.
    public var sampleRatioMismatchThreshold: Double

    /// A configuration; every argument has the documented default.
    public init(
        confidenceLevel: Double = 0.95,
        mixtureVariance: MixtureVariance = .relativeToControl(standardDeviation: 0.1),
        conversionPriorAlpha: Double = 1,
        conversionPriorBeta: Double = 1,
        sampleRatioMismatchThreshold: Double = 0.001,
        rateVariance: RateVariance = .wald
    ) {
        self.confidenceLevel = confidenceLevel
        self.mixtureVariance = mixtureVariance
        self.rateVariance = rateVariance
        self.conversionPriorAlpha = conversionPriorAlpha
        self.conversionPriorBeta = conversionPriorBeta
        self.sampleRatioMismatchThreshold = sampleRatioMismatchThreshold
    }

    /// The rollout guard's configuration (docs/ROLLOUTS.md, "What the guard decides"): τ from
    /// both arms' pooled spread and Agresti–Caffo rate variances, so a comparison group with no
    /// event still gives a reading and a large jump on few units is caught at once.
    public static func guardrail(confidenceLevel: Double, sampleRatioMismatchThreshold: Double) -> Self {
        Self(
            confidenceLevel: confidenceLevel,
            mixtureVariance: .relativeToPooledStandardDeviation(multiple: 0.2),
            sampleRatioMismatchThreshold: sampleRatioMismatchThreshold,
            rateVariance: .agrestiCaffo
        )
    }
}

/// How the mixture variance τ² of the always-valid test is chosen. τ is the size of effect the
/// test is most sensitive to; any τ > 0 keeps the guarantees, a τ near the true effect gives the
/// narrowest intervals, and one far below it the widest (the test barely moves for effects many
/// times τ), so a τ on the large side costs little and one on the small side much.
public enum MixtureVariance: Sendable, Hashable, Codable {
    /// τ = `standardDeviation` × |control's estimate| for the absolute difference (0.1: effects
    /// around 10 % of control). The experiments' default; τ is 0 while control's estimate is.
    case relativeToControl(standardDeviation: Double)
    /// τ² in the metric's squared units for the absolute difference.
    case absolute(variance: Double)
    /// τ = `multiple` × the per-unit standard deviation of treatment's and control's units taken
    /// as one sample (for a rate √(p̄(1 − p̄)) with p̄ the pooled rate), so effects around
    /// `multiple` standard deviations. Unlike ``relativeToControl(standardDeviation:)`` it does
    /// not vanish with control's estimate, and it grows with a large jump (the pooled spread
    /// includes the difference). The rollout guard's (``AnalysisConfiguration/guardrail(confidenceLevel:sampleRatioMismatchThreshold:)``).
    case relativeToPooledStandardDeviation(multiple: Double)

    /// τ² for the absolute difference, given control's estimate and the per-unit variance of both
    /// arms' units pooled.
    func absoluteVariance(controlEstimate: Double, pooledUnitVariance: Double) -> Double {
        switch self {
        case .relativeToControl(let standardDeviation):
            let tau = standardDeviation * abs(controlEstimate)
            return tau * tau
        case .absolute(let variance):
            return variance
        case .relativeToPooledStandardDeviation(let multiple):
            return multiple * multiple * pooledUnitVariance
        }
    }
}

/// How a conversion rate's variance is estimated for the comparisons (intervals of a single rate
/// are Wilson's either way).
public enum RateVariance: Sendable, Hashable, Codable {
    /// p(1 − p) / n: 0 when no unit or every unit converted, and such a look says nothing.
    case wald
    /// p̃(1 − p̃) / (n + 2) with p̃ = (converted + 1) / (n + 2) (Agresti and Caffo, 2000): one
    /// conversion and one non-conversion added to each arm, for the variance only (the estimate
    /// stays converted / n). Never 0, so an arm with no event (or only events) is read at once.
    case agrestiCaffo
}
