/// A treatment's difference from control, absolute and relative, with their variances.
public struct Difference: Sendable, Hashable, Codable {
    /// treatment − control; its variance is the sum of the two estimates' variances (independent
    /// groups).
    public var absolute: Estimate
    /// treatment / control − 1, with the delta-method variance
    /// Var(T)/C² + T²·Var(C)/C⁴; `nil` when control's estimate is 0.
    public var relative: Estimate?

    /// The difference between two independent estimates.
    public init(treatment: Estimate, control: Estimate) {
        absolute = Estimate(
            value: treatment.value - control.value,
            variance: treatment.variance + control.variance
        )
        let c = control.value
        if c == 0 || !c.isFinite {
            relative = nil
        } else {
            let ratio = treatment.value / c
            relative = Estimate(
                value: ratio - 1,
                variance: treatment.variance / (c * c) + ratio * ratio * control.variance / (c * c)
            )
        }
    }
}
