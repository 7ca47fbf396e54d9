/// The Bayesian reading of a treatment against control: how likely the treatment is better, and
/// what choosing each side costs in expectation if it is in fact the worse one.
public struct BayesianComparison: Sendable, Hashable, Codable {
    /// The posterior model the numbers come from.
    public enum Model: String, Sendable, Hashable, Codable {
        /// Beta-binomial: each conversion rate has a Beta posterior (conversion rates).
        case betaBinomial
        /// Normal approximation: each estimate is normal around its value with its variance
        /// (means per unit and ratio metrics).
        case normal
    }

    /// The posterior model.
    public var model: Model
    /// P(treatment > control) under the posterior.
    public var chanceToBeatControl: Double
    /// E[max(control − treatment, 0)]: the expected loss, in the metric's units, of shipping the
    /// treatment.
    public var expectedLossOfTreatment: Double
    /// E[max(treatment − control, 0)]: the expected loss of keeping control.
    public var expectedLossOfControl: Double

    /// Values as computed.
    public init(
        model: Model,
        chanceToBeatControl: Double,
        expectedLossOfTreatment: Double,
        expectedLossOfControl: Double
    ) {
        self.model = model
        self.chanceToBeatControl = chanceToBeatControl
        self.expectedLossOfTreatment = expectedLossOfTreatment
        self.expectedLossOfControl = expectedLossOfControl
    }

    /// The normal approximation: the difference D ~ N(d, s²) (flat priors), so
    /// P(D > 0) = Φ(d/s), E[max(−D, 0)] = s·φ(d/s) − d·Φ(−d/s) and
    /// E[max(D, 0)] = s·φ(d/s) + d·Φ(d/s).
    public static func normal(_ difference: Estimate) -> BayesianComparison {
        let d = difference.value
        let s = difference.standardError
        if s == 0 || !s.isFinite {
            let chance = !s.isFinite ? 0.5 : d > 0 ? 1 : d < 0 ? 0 : 0.5
            let lossTreatment = s.isFinite ? max(-d, 0) : .infinity
            let lossControl = s.isFinite ? max(d, 0) : .infinity
            return BayesianComparison(
                model: .normal,
                chanceToBeatControl: chance,
                expectedLossOfTreatment: lossTreatment,
                expectedLossOfControl: lossControl
            )
        }
        let z = d / s
        let density = NormalDistribution.density(z)
        return BayesianComparison(
            model: .normal,
            chanceToBeatControl: NormalDistribution.cdf(z),
            expectedLossOfTreatment: max(0, s * density - d * NormalDistribution.survival(z)),
            expectedLossOfControl: max(0, s * density + d * NormalDistribution.cdf(z))
        )
    }

    /// The beta-binomial model, integrated numerically (deterministic, no Monte Carlo): see
    /// ``BetaBinomialIntegrals``.
    public static func betaBinomial(control: BetaDistribution, treatment: BetaDistribution) -> BayesianComparison {
        BayesianComparison(
            model: .betaBinomial,
            chanceToBeatControl: BetaBinomialIntegrals.probabilityGreater(treatment, than: control),
            expectedLossOfTreatment: BetaBinomialIntegrals.expectedShortfall(of: treatment, below: control),
            expectedLossOfControl: BetaBinomialIntegrals.expectedShortfall(of: control, below: treatment)
        )
    }
}
