import Foundation

/// A Beta(α, β) distribution with α, β ≥ 1 (a density that is finite on [0, 1] and unimodal), as
/// used for the posterior of a conversion rate.
public struct BetaDistribution: Sendable, Hashable {
    /// The first shape parameter α (prior α + converted units).
    public let alpha: Double
    /// The second shape parameter β (prior β + units that did not convert).
    public let beta: Double

    /// A distribution with the given shape parameters (see ``isSupported``).
    public init(alpha: Double, beta: Double) {
        self.alpha = alpha
        self.beta = beta
    }

    /// Whether α and β are finite and at least 1, the parameters the integrals support (others
    /// give NaN).
    public var isSupported: Bool { alpha >= 1 && beta >= 1 && alpha.isFinite && beta.isFinite }

    /// The mean α / (α + β).
    public var mean: Double { alpha / (alpha + beta) }

    /// The variance αβ / ((α + β)²(α + β + 1)).
    public var variance: Double {
        let total = alpha + beta
        return alpha * beta / (total * total * (total + 1))
    }

    /// The distribution function P(X ≤ x).
    public func cdf(_ x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        return IncompleteBeta.regularized(x, alpha, beta)
    }

    /// The density at x.
    public func density(_ x: Double) -> Double {
        guard x >= 0, x <= 1 else { return 0 }
        if x > 0 && x < 1 {
            // x^α (1−x)^β / B(α, β) divided by x(1−x), with the prefactor's accurate logarithm.
            return exp(IncompleteBeta.logPrefactor(x, alpha, beta)) / (x * (1 - x))
        }
        let logDensity = unnormalizedLogDensity(x) + logNormalizer
        return logDensity.isNaN ? 0 : exp(logDensity)
    }

    /// E[X · 1{X ≤ x}] = mean · I_x(α + 1, β).
    func partialMean(below x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return mean }
        return mean * IncompleteBeta.regularized(x, alpha + 1, beta)
    }

    private var logNormalizer: Double { lgamma(alpha + beta) - lgamma(alpha) - lgamma(beta) }

    private func unnormalizedLogDensity(_ x: Double) -> Double {
        let left = alpha == 1 ? 0 : (alpha - 1) * log(x)
        let right = beta == 1 ? 0 : (beta - 1) * log1p(-x)
        return left + right
    }

    /// The mode, where the log density peaks (it is concave for α, β ≥ 1).
    private var mode: Double {
        if alpha == 1 && beta == 1 { return 0.5 }
        return (alpha - 1) / (alpha + beta - 2)
    }

    /// The interval outside which the density is below e⁻⁴⁵ of its peak, so the probability
    /// outside is far below 1e-15 (the log density is concave): the range every integral over
    /// this distribution is taken on.
    var support: (lower: Double, upper: Double) {
        let peak = mode
        let threshold = unnormalizedLogDensity(peak) - 45
        return (lower: edge(from: peak, toward: 0, threshold), upper: edge(from: peak, toward: 1, threshold))
    }

    private func edge(from peak: Double, toward end: Double, _ threshold: Double) -> Double {
        if unnormalizedLogDensity(end) >= threshold { return end }
        var inside = peak
        var outside = end
        for _ in 0..<200 {
            let middle = (inside + outside) / 2
            if middle == inside || middle == outside { break }
            if unnormalizedLogDensity(middle) >= threshold {
                inside = middle
            } else {
                outside = middle
            }
        }
        return outside
    }
}
