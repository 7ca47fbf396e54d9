/// A closed interval [lower, upper]; its ends may be ±∞ where the data cannot bound it.
public struct Interval: Sendable, Hashable, Codable {
    /// The lower end.
    public var lower: Double
    /// The upper end.
    public var upper: Double

    /// An interval between two ends.
    public init(lower: Double, upper: Double) {
        self.lower = lower
        self.upper = upper
    }

    /// `center ± halfWidth`.
    init(center: Double, halfWidth: Double) {
        self.init(lower: center - halfWidth, upper: center + halfWidth)
    }

    /// (−∞, ∞): nothing known yet.
    public static let unbounded = Interval(lower: -.infinity, upper: .infinity)

    /// upper − lower.
    public var width: Double { upper - lower }

    /// Whether the interval contains `value`.
    public func contains(_ value: Double) -> Bool { lower <= value && value <= upper }

    /// The part both intervals share; `nil` when they do not overlap.
    public func intersection(_ other: Interval) -> Interval? {
        let shared = Interval(lower: max(lower, other.lower), upper: min(upper, other.upper))
        return shared.lower <= shared.upper ? shared : nil
    }
}
