/// The running sums of one metric over a variant's exposed units, where a unit's value is the
/// total of its metric events after its first exposure (0 for a unit without events).
///
/// Kept as events arrive: when a unit's total goes from `old` to `new`, `valueSum` grows by
/// `new − old` and `valueSumOfSquares` by `new² − old²` (``recordEvent(value:previousUnitTotal:)``).
public struct MetricAggregates: Sendable, Hashable, Codable {
    /// Units with at least one event of this metric (they "converted").
    public var convertedUnits: Int
    /// Σ over exposed units of the unit's value.
    public var valueSum: Double
    /// Σ over exposed units of the square of the unit's value.
    public var valueSumOfSquares: Double

    /// Sums as stored.
    public init(convertedUnits: Int, valueSum: Double, valueSumOfSquares: Double) {
        self.convertedUnits = convertedUnits
        self.valueSum = valueSum
        self.valueSumOfSquares = valueSumOfSquares
    }

    /// The sums of a metric no unit has an event of yet.
    public static let zero = MetricAggregates(convertedUnits: 0, valueSum: 0, valueSumOfSquares: 0)

    /// Adds one metric event of `value` for a unit whose total before it was `previousUnitTotal`
    /// (`nil` when this is the unit's first event of the metric, which makes it convert).
    public mutating func recordEvent(value: Double, previousUnitTotal: Double?) {
        let old = previousUnitTotal ?? 0
        let new = old + value
        // Saturates rather than trapping; no experiment has Int.max units.
        if previousUnitTotal == nil && convertedUnits < Int.max { convertedUnits += 1 }
        valueSum += value
        valueSumOfSquares += new * new - old * old
    }
}
