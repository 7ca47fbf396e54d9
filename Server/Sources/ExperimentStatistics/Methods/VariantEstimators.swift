/// Each measure's estimate and per-unit variance from a variant's sums.
enum VariantEstimators {
    /// p = c / n; per-unit variance p(1 − p); Var(p̂) = p(1 − p) / n (the Wald variance).
    static func conversionRate(converted: Int, units: Int) -> (estimate: Estimate, unitVariance: Double)? {
        guard units > 0 else { return nil }
        let n = Double(units)
        let p = Double(converted) / n
        let unitVariance = p * (1 - p)
        return (Estimate(value: p, variance: unitVariance / n), unitVariance)
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

    /// A centred sum of squares: never negative (rounding can make it slightly so), +∞ when the
    /// sums overflowed.
    private static func centered(_ value: Double) -> Double {
        value.isFinite ? max(0, value) : .infinity
    }
}
