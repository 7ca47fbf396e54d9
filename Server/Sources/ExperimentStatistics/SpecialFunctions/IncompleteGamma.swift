import Foundation

/// The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 − P(a, x), by the series for
/// x < a + 1 and by the continued fraction (modified Lentz) otherwise (Numerical Recipes, §6.2), to
/// a relative accuracy of about 1e-15.
public enum IncompleteGamma {
    /// P(a, x) = γ(a, x) / Γ(a), for a > 0 and x ≥ 0; NaN otherwise.
    public static func regularizedLower(_ a: Double, _ x: Double) -> Double {
        guard a > 0, x >= 0, a.isFinite, !x.isNaN else { return .nan }
        if x == 0 { return 0 }
        if x.isInfinite { return 1 }
        return x < a + 1 ? series(a, x) : 1 - continuedFraction(a, x)
    }

    /// Q(a, x) = Γ(a, x) / Γ(a), for a > 0 and x ≥ 0; NaN otherwise.
    public static func regularizedUpper(_ a: Double, _ x: Double) -> Double {
        guard a > 0, x >= 0, a.isFinite, !x.isNaN else { return .nan }
        if x == 0 { return 1 }
        if x.isInfinite { return 0 }
        return x < a + 1 ? 1 - series(a, x) : continuedFraction(a, x)
    }

    /// The survival function of the chi-square distribution, P(χ²ₖ > x) = Q(k/2, x/2).
    public static func chiSquareSurvival(_ x: Double, degreesOfFreedom: Double) -> Double {
        if x.isNaN || degreesOfFreedom.isNaN || degreesOfFreedom <= 0 { return .nan }
        if x <= 0 { return 1 }
        return regularizedUpper(degreesOfFreedom / 2, x / 2)
    }

    private static let epsilon = 1e-15
    private static let tiny = Double.leastNormalMagnitude / epsilon

    private static func prefactor(_ a: Double, _ x: Double) -> Double {
        exp(-x + a * log(x) - lgamma(a))
    }

    private static func series(_ a: Double, _ x: Double) -> Double {
        var denominator = a
        var term = 1 / a
        var sum = term
        for _ in 0..<maxIterations(a) {
            denominator += 1
            term *= x / denominator
            sum += term
            if abs(term) < abs(sum) * epsilon { break }
        }
        return min(1, sum * prefactor(a, x))
    }

    private static func continuedFraction(_ a: Double, _ x: Double) -> Double {
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        var i = 1.0
        for _ in 0..<maxIterations(a) {
            let an = -i * (i - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            i += 1
            if abs(delta - 1) < epsilon { break }
        }
        return min(1, prefactor(a, x) * h)
    }

    /// Both expansions converge in O(√a) steps around x ≈ a; the bound only guards against a loop
    /// that never ends on inputs no experiment produces.
    private static func maxIterations(_ a: Double) -> Int {
        10_000 + Int(min(1e7, 20 * a.squareRoot()))
    }
}
