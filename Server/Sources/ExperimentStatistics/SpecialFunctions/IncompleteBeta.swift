import Foundation

/// The regularized incomplete beta function Iₓ(a, b), the distribution function of Beta(a, b), by
/// its continued fraction (modified Lentz, Numerical Recipes §6.4) on whichever side of the mean
/// it converges fast, to a relative accuracy of about 1e-14.
public enum IncompleteBeta {
    /// Iₓ(a, b) for a, b > 0 and 0 ≤ x ≤ 1; NaN otherwise.
    public static func regularized(_ x: Double, _ a: Double, _ b: Double) -> Double {
        guard a > 0, b > 0, a.isFinite, b.isFinite, x >= 0, x <= 1 else { return .nan }
        if x == 0 { return 0 }
        if x == 1 { return 1 }
        let front = exp(logPrefactor(x, a, b))
        if x < (a + 1) / (a + b + 2) {
            return min(1, front * continuedFraction(x, a, b) / a)
        }
        return max(0, 1 - front * continuedFraction(1 - x, b, a) / b)
    }

    /// log( xᵃ (1−x)ᵇ / B(a, b) ), the log of the prefactor. Where a or b is large, lgamma's
    /// values are too (≈ 10⁸ at 5·10⁶) and their rounding alone costs 1e-8 relative, so Stirling's
    /// series is used in a form whose terms stay small (as in TOMS 708's brcomp).
    static func logPrefactor(_ x: Double, _ a: Double, _ b: Double) -> Double {
        let large = 20.0
        if a >= large && b >= large {
            // a·log(x(a+b)/a) + b·log((1−x)(a+b)/b) with the two first-order terms (which cancel
            // exactly) removed: a·(log1p(u) − u) + b·(log1p(v) − v).
            let total = a + b
            let u = (x * total - a) / a
            let v = ((1 - x) * total - b) / b
            return a * logOnePlusMinus(u) + b * logOnePlusMinus(v)
                + 0.5 * log(a / total * b) - 0.5 * log(2 * Double.pi)
                + stirlingCorrection(total) - stirlingCorrection(a) - stirlingCorrection(b)
        }
        if b >= large {
            // log Γ(a+b) − log Γ(b) = (b − ½)·log1p(a/b) + a·log(a+b) − a + δ(a+b) − δ(b).
            return a * log(x * (a + b)) - a + b * log1p(-x) + (b - 0.5) * log1p(a / b) - lgamma(a)
                + stirlingCorrection(a + b) - stirlingCorrection(b)
        }
        if a >= large {
            return logPrefactor(1 - x, b, a)
        }
        return lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)
    }

    /// log(1 + u) − u, without cancellation for small u.
    private static func logOnePlusMinus(_ u: Double) -> Double {
        if abs(u) > 0.1 { return log1p(u) - u }
        // −u²/2 + u³/3 − u⁴/4 + …
        var term = -u * u
        var sum = 0.0
        var k = 2.0
        while k < 60 {
            let next = term / k
            sum += next
            if abs(next) <= abs(sum) * 1e-17 { break }
            term *= -u
            k += 1
        }
        return sum
    }

    /// δ(z) = log Γ(z) − ((z − ½)·log z − z + ½·log 2π), by its asymptotic series (z ≥ 20:
    /// error below 1e-17).
    private static func stirlingCorrection(_ z: Double) -> Double {
        let inverse = 1 / z
        let square = inverse * inverse
        let series = 1.0 / 12 - square * (1.0 / 360 - square * (1.0 / 1260 - square * (1.0 / 1680 - square / 1188)))
        return inverse * series
    }

    private static let epsilon = 1e-15
    private static let tiny = Double.leastNormalMagnitude / epsilon

    private static func continuedFraction(_ x: Double, _ a: Double, _ b: Double) -> Double {
        let qab = a + b
        let qap = a + 1
        let qam = a - 1
        var c = 1.0
        var d = 1 - qab * x / qap
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        let iterations = 10_000 + Int(min(1e7, 20 * max(a, b).squareRoot()))
        var m = 1.0
        for _ in 0..<iterations {
            let m2 = 2 * m
            var aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            m += 1
            if abs(delta - 1) < epsilon { break }
        }
        return h
    }
}
