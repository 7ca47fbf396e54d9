/// Each measure's estimate, per-unit variance and interval from a variant's sums.
enum VariantEstimators {
    /// p = c / n; per-unit variance p(1 − p); Var(p̂) = p(1 − p) / n (the Wald variance). With
    /// ``RateVariance/agrestiCaffo`` p̃ = (c + 1) / (n + 2) replaces p in both variances and n + 2
    /// replaces n in Var(p̂); the estimate stays p.
    static func conversionRate(
        converted: Int,
        units: Int,
        variance: RateVariance = .wald
    ) -> (estimate: Estimate, unitVariance: Double)? {
        guard units > 0 else { return nil }
        let n = Double(units)
        let p = Double(converted) / n
        switch variance {
        case .wald:
            let unitVariance = p * (1 - p)
            return (Estimate(value: p, variance: unitVariance / n), unitVariance)
        case .agrestiCaffo:
            let adjusted = (Double(converted) + 1) / (n + 2)
            let unitVariance = adjusted * (1 - adjusted)
            return (Estimate(value: p, variance: unitVariance / (n + 2)), unitVariance)
        }
    }

    /// x̄ = Σx / n; per-unit sample variance s² = (Σx² − Σx·x̄) / (n − 1); Var(x̄) = s² / n.
    static func meanPerUnit(_ sums: MetricAggregates, units: Int) -> (estimate: Estimate, unitVariance: Double)? {
        guard units > 1 else { return nil }
        let n = Double(units)
        let mean = sums.valueSum / n
        let unitVariance = centered(sums.valueSumOfSquares - sums.valueSum * mean) / (n - 1)
        return (Estimate(value: mean, variance: unitVariance / n), unitVariance)
    }

    /// R = Σx / Σy. With ȳ = Σy / n and the sample (co)variances s_xx, s_yy, s_xy (n − 1), the
    /// delta method gives the per-unit linearized variance (s_xx − 2R·s_xy + R²·s_yy) / ȳ² and
    /// Var(R̂) = that / n.
    static func ratio(_ sums: RatioMetricAggregates, units: Int) -> (estimate: Estimate, unitVariance: Double)? {
        guard units > 1, sums.denominatorSum != 0 else { return nil }
        let n = Double(units)
        let meanX = sums.numeratorSum / n
        let meanY = sums.denominatorSum / n
        let r = sums.numeratorSum / sums.denominatorSum
        let sxx = centered(sums.numeratorSumOfSquares - sums.numeratorSum * meanX) / (n - 1)
        let syy = centered(sums.denominatorSumOfSquares - sums.denominatorSum * meanY) / (n - 1)
        let sxy = (sums.productSum - sums.numeratorSum * meanY) / (n - 1)
        var linearized = (sxx - 2 * r * sxy + r * r * syy) / (meanY * meanY)
        if linearized.isNaN { linearized = .infinity }
        linearized = max(0, linearized)
        return (Estimate(value: r, variance: linearized / n), linearized)
    }

    /// Wilson's score interval for a rate, with z = Φ⁻¹(1 − α/2): (p + z²/2n ± z·√(p(1 − p)/n +
    /// z²/4n²)) / (1 + z²/n). Unlike the Wald interval p ± z·√(p(1 − p)/n) it stays inside
    /// [0, 1] and does not shrink to a point at 0 or n conversions.
    static func wilsonInterval(converted: Int, units: Int, critical z: Double) -> Interval? {
        guard units > 0 else { return nil }
        let n = Double(units)
        let p = Double(converted) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return Interval(lower: max(0, center - half), upper: min(1, center + half))
    }

    /// The normal interval estimate ± z·√variance (means per unit; ratios by the delta method).
    static func normalInterval(_ estimate: Estimate, critical z: Double) -> Interval {
        Interval(center: estimate.value, halfWidth: z * estimate.standardError)
    }

    /// A centred sum of squares: never negative (rounding can make it slightly so), +∞ when the
    /// sums overflowed.
    private static func centered(_ value: Double) -> Double {
        value.isFinite ? max(0, value) : .infinity
    }
}
