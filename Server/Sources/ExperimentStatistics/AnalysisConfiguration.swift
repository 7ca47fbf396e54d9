/// The choices an experiment makes about its analysis. The defaults suit most experiments.
public struct AnalysisConfiguration: Sendable, Hashable, Codable {
    /// The coverage of every interval, 0.95 by default (α = 0.05 for the p-values' threshold).
    public var confidenceLevel: Double
    /// The variance τ² of the normal mixture in the always-valid (mSPRT) test.
    public var mixtureVariance: MixtureVariance
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
        sampleRatioMismatchThreshold: Double = 0.001
    ) {
        self.confidenceLevel = confidenceLevel
        self.mixtureVariance = mixtureVariance
        self.conversionPriorAlpha = conversionPriorAlpha
        self.conversionPriorBeta = conversionPriorBeta
        self.sampleRatioMismatchThreshold = sampleRatioMismatchThreshold
    }
}

/// How the mixture variance τ² of the always-valid test is chosen. τ is the size of effect the
/// test is most sensitive to; any τ > 0 keeps the guarantees, a τ near the true effect gives the
/// narrowest intervals.
public enum MixtureVariance: Sendable, Hashable, Codable {
    /// τ = `standardDeviation` × |control's estimate| for the absolute difference, and
    /// τ = `standardDeviation` for the relative difference (0.1: effects around 10 % of control).
    case relativeToControl(standardDeviation: Double)
    /// τ² in the metric's squared units for the absolute difference; the relative difference
    /// uses τ² / control's estimate².
    case absolute(variance: Double)

    /// τ² for the absolute difference, given control's estimate.
    func absoluteVariance(controlEstimate: Double) -> Double {
        switch self {
        case .relativeToControl(let standardDeviation):
            let tau = standardDeviation * abs(controlEstimate)
            return tau * tau
        case .absolute(let variance):
            return variance
        }
    }

    /// τ² for the relative difference, given control's estimate.
    func relativeVariance(controlEstimate: Double) -> Double {
        switch self {
        case .relativeToControl(let standardDeviation):
            return standardDeviation * standardDeviation
        case .absolute(let variance):
            return variance / (controlEstimate * controlEstimate)
        }
    }
}
