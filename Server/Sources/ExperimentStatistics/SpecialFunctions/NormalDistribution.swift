import Foundation

/// The standard normal distribution: its density, distribution function, survival function and
/// quantile, accurate to about 1e-15 relative.
public enum NormalDistribution {
    /// The density φ(x) = exp(−x²/2) / √(2π).
    public static func density(_ x: Double) -> Double {
        exp(-0.5 * x * x) / (2 * Double.pi).squareRoot()
    }

    /// The distribution function Φ(x) = P(Z ≤ x), computed as erfc(−x/√2)/2 so the lower tail
    /// keeps its relative accuracy.
    public static func cdf(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        return 0.5 * erfc(-x / 2.0.squareRoot())
    }

    /// The survival function 1 − Φ(x) = P(Z > x), accurate in the upper tail.
    public static func survival(_ x: Double) -> Double {
        if x.isNaN { return .nan }
        return 0.5 * erfc(x / 2.0.squareRoot())
    }

    /// The quantile Φ⁻¹(p): Acklam's rational approximation (relative error 1.2e-9) refined by one
    /// Halley step on erfc, which brings it to machine precision. NaN outside [0, 1]; ±∞ at 0 and 1.
    public static func quantile(_ p: Double) -> Double {
        if p.isNaN || p < 0 || p > 1 { return .nan }
        if p == 0 { return -.infinity }
        if p == 1 { return .infinity }
        let lowerBreak = 0.02425
        var x: Double
        if p < lowerBreak {
            let q = (-2 * log(p)).squareRoot()
            x = tail(q)
        } else if p <= 1 - lowerBreak {
            let q = p - 0.5
            let r = q * q
            let numerator = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            let denominator = ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1
            x = numerator / denominator
        } else {
            let q = (-2 * log1p(-p)).squareRoot()
            x = -tail(q)
        }
        // One Halley step: e = Φ(x) − p, computed from whichever tail keeps the precision.
        let error = p < 0.5 ? cdf(x) - p : (1 - p) - survival(x)
        let u = error * (2 * Double.pi).squareRoot() * exp(0.5 * x * x)
        x -= u / (1 + 0.5 * x * u)
        return x
    }

    private static func tail(_ q: Double) -> Double {
        let numerator = ((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]
        let denominator = (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        return numerator / denominator
    }

    private static let a = [
        -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
        1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00,
    ]
    private static let b = [
        -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
        6.680131188771972e+01, -1.328068155288572e+01,
    ]
    private static let c = [
        -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
        -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00,
    ]
    private static let d = [
        7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00,
    ]
}
