/// How many units per variant a fixed-horizon two-sided z-test needs to detect a difference, from
/// the per-unit variances seen so far: n = (z₁₋α/₂ + z_power)² (σ²_control + σ²_treatment) / δ²
/// (equal arms; statsmodels' `NormalIndPower` gives the same, see SampleSizeReferenceTests).
///
/// A planning figure, not a stopping rule: the sequential method's always-valid intervals need
/// more units than this to exclude zero, and the variances are themselves estimates.
public enum SampleSizeEstimate {
    /// The power the estimate plans for: an 80 % chance to detect a real difference of that size.
    public static let defaultPower = 0.8

    /// Units per variant, or nil when no finite number would do (no difference, no variance).
    /// - Parameters:
    ///   - difference: The absolute difference to detect (the metric's units).
    ///   - controlVariance: Control's per-unit variance (``VariantEstimate/unitVariance``).
    ///   - treatmentVariance: The treatment's per-unit variance.
    ///   - confidenceLevel: The two-sided level, 1 − α.
    ///   - power: The chance to detect the difference when it is real.
    public static func unitsPerVariant(
        difference: Double,
        controlVariance: Double,
        treatmentVariance: Double,
        confidenceLevel: Double,
        power: Double = defaultPower
    ) -> Double? {
        guard difference.isFinite, difference != 0,
            let (z, variance) = terms(controlVariance, treatmentVariance, confidenceLevel, power)
        else { return nil }
        return z * z * variance / (difference * difference)
    }

    /// The smallest absolute difference `unitsPerVariant` units per variant detect with `power`:
    /// the same relation solved for δ; nil without units or variance.
    public static func minimumDetectableDifference(
        unitsPerVariant units: Double,
        controlVariance: Double,
        treatmentVariance: Double,
        confidenceLevel: Double,
        power: Double = defaultPower
    ) -> Double? {
        guard units > 0, let (z, variance) = terms(controlVariance, treatmentVariance, confidenceLevel, power)
        else { return nil }
        return z * (variance / units).squareRoot()
    }

    /// The relation's two terms, z₁₋α/₂ + z_power and σ²_control + σ²_treatment; nil when the
    /// variance is not finite and positive or the level or power is not strictly between 0 and 1.
    private static func terms(
        _ controlVariance: Double,
        _ treatmentVariance: Double,
        _ confidenceLevel: Double,
        _ power: Double
    ) -> (z: Double, variance: Double)? {
        let variance = controlVariance + treatmentVariance
        guard variance.isFinite, variance > 0, confidenceLevel > 0, confidenceLevel < 1, power > 0, power < 1
        else { return nil }
        let z = NormalDistribution.quantile(1 - (1 - confidenceLevel) / 2) + NormalDistribution.quantile(power)
        return (z, variance)
    }
}
