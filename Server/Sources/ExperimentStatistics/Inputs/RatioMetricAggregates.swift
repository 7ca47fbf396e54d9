/// The running sums of a ratio metric Σx / Σy over a variant's exposed units (e.g. revenue per
/// session: x is a unit's revenue, y its sessions), analysed with the delta method because x and y
/// are correlated within a unit.
public struct RatioMetricAggregates: Sendable, Hashable, Codable {
    /// Σ x over exposed units.
    public var numeratorSum: Double
    /// Σ y over exposed units.
    public var denominatorSum: Double
    /// Σ x² over exposed units.
    public var numeratorSumOfSquares: Double
    /// Σ y² over exposed units.
    public var denominatorSumOfSquares: Double
    /// Σ x·y over exposed units.
    public var productSum: Double

    /// Sums as stored.
    public init(
        numeratorSum: Double,
        denominatorSum: Double,
        numeratorSumOfSquares: Double,
        denominatorSumOfSquares: Double,
        productSum: Double
    ) {
        self.numeratorSum = numeratorSum
        self.denominatorSum = denominatorSum
        self.numeratorSumOfSquares = numeratorSumOfSquares
        self.denominatorSumOfSquares = denominatorSumOfSquares
        self.productSum = productSum
    }

    /// The sums of a ratio metric no unit has an event of yet.
    public static let zero = RatioMetricAggregates(
        numeratorSum: 0,
        denominatorSum: 0,
        numeratorSumOfSquares: 0,
        denominatorSumOfSquares: 0,
        productSum: 0
    )
}
