/// A point estimate with the variance of its sampling distribution.
public struct Estimate: Sendable, Hashable, Codable {
    /// The estimate.
    public var value: Double
    /// The variance of the estimate (its standard error squared).
    public var variance: Double

    /// An estimate and its variance.
    public init(value: Double, variance: Double) {
        self.value = value
        self.variance = variance
    }

    /// The standard error √variance.
    public var standardError: Double { variance.squareRoot() }
}
