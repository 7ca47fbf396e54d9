/// The two integrals of the beta-binomial comparison, by composite Gauss–Legendre quadrature over
/// the range where both posteriors have mass, with the parts outside in closed form:
///
///     P(X > Y)          = ∫ f_X(x) F_Y(x) dx
///     E[max(Y − X, 0)]  = ∫ f_X(x) ( E[Y] − E[Y·1{Y ≤ x}] − x (1 − F_Y(x)) ) dx
///
/// where E[Y·1{Y ≤ x}] = E[Y] · I_x(α_Y + 1, β_Y).
public enum BetaBinomialIntegrals {
    /// P(X > Y) for independent X and Y.
    public static func probabilityGreater(_ x: BetaDistribution, than y: BetaDistribution) -> Double {
        guard x.isSupported, y.isSupported else { return .nan }
        let xs = x.support
        let ys = y.support
        // Above Y's support F_Y = 1: that part is P(X > max(upper_Y, lower_X)).
        var total = 0.0
        if ys.upper < xs.upper {
            total += 1 - x.cdf(max(ys.upper, xs.lower))
        }
        let lower = max(xs.lower, ys.lower)
        let upper = min(xs.upper, ys.upper)
        if upper > lower {
            total += GaussLegendre.integrate(
                from: lower,
                to: upper,
                panels: panelCount(lower, upper, xs, ys)
            ) { t in
                x.density(t) * y.cdf(t)
            }
        }
        return min(1, max(0, total))
    }

    /// E[max(Y − X, 0)] for independent X and Y: how much X falls short of Y on average.
    public static func expectedShortfall(of x: BetaDistribution, below y: BetaDistribution) -> Double {
        guard x.isSupported, y.isSupported else { return .nan }
        let xs = x.support
        let ys = y.support
        let meanY = y.mean
        var total = 0.0
        // Below Y's support F_Y = 0, so the integrand is f_X(t)(E[Y] − t), in closed form.
        let belowEnd = min(xs.upper, ys.lower)
        if belowEnd > xs.lower {
            let mass = x.cdf(belowEnd) - x.cdf(xs.lower)
            let partialMean = x.partialMean(below: belowEnd) - x.partialMean(below: xs.lower)
            total += meanY * mass - partialMean
        }
        // Above Y's support the integrand is 0.
        let lower = max(xs.lower, ys.lower)
        let upper = min(xs.upper, ys.upper)
        if upper > lower {
            total += GaussLegendre.integrate(
                from: lower,
                to: upper,
                panels: panelCount(lower, upper, xs, ys)
            ) { t in
                let above = meanY - y.partialMean(below: t) - t * (1 - y.cdf(t))
                return x.density(t) * max(0, above)
            }
        }
        return max(0, total)
    }

    /// Enough panels that each is at most 1/8 of the narrower support (about two and a half
    /// standard deviations), where 20 nodes integrate the smooth integrand to machine precision.
    private static func panelCount(
        _ lower: Double,
        _ upper: Double,
        _ xs: (lower: Double, upper: Double),
        _ ys: (lower: Double, upper: Double)
    ) -> Int {
        let narrowest = min(xs.upper - xs.lower, ys.upper - ys.lower)
        let panels = ((upper - lower) / narrowest * 8).rounded(.up)
        guard narrowest > 0, panels.isFinite else { return 4 }
        return Int(min(1024, max(4, panels)))
    }
}
