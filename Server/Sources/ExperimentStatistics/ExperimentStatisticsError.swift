/// Aggregates or a configuration that no real experiment can produce. Each case names the variant
/// (and metric) at fault, and its ``description`` says what was expected.
public enum ExperimentStatisticsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than two variants: there is nothing to compare.
    case tooFewVariants(count: Int)
    /// Two variants share a name.
    case duplicateVariant(String)
    /// The control variant is not among the variants.
    case unknownControl(String)
    /// The control variant has no exposed units, so no difference against it is defined.
    case controlWithoutUnits(variant: String)
    /// A variant's exposed units are negative.
    case negativeExposedUnits(variant: String, value: Int)
    /// A split weight is zero, negative, infinite or NaN.
    case nonPositiveSplitWeight(variant: String, value: Double)
    /// A metric's converted units are negative.
    case negativeConvertedUnits(variant: String, metric: String, value: Int)
    /// A metric's converted units exceed the variant's exposed units.
    case convertedUnitsExceedExposed(variant: String, metric: String, converted: Int, exposed: Int)
    /// A sum is infinite or NaN.
    case nonFiniteSum(variant: String, metric: String, field: String, value: Double)
    /// A sum of squares is negative.
    case negativeSumOfSquares(variant: String, metric: String, field: String, value: Double)
    /// A configuration value is outside its range.
    case invalidConfiguration(field: String, value: Double, expected: String)

    /// What is wrong and what was expected, naming the variant and metric.
    public var description: String {
        switch self {
        case .tooFewVariants(let count):
            return "an experiment needs at least two variants (control and one treatment), got \(count)"
        case .duplicateVariant(let name):
            return "variant '\(name)' appears more than once; variant names must be unique"
        case .unknownControl(let name):
            return "control variant '\(name)' is not one of the experiment's variants"
        case .controlWithoutUnits(let variant):
            return "control variant '\(variant)' has no exposed units; at least one is needed to compare with it"
        case .negativeExposedUnits(let variant, let value):
            return "variant '\(variant)' has \(value) exposed units; expected 0 or more"
        case .nonPositiveSplitWeight(let variant, let value):
            return "variant '\(variant)' has split weight \(value); expected a finite number above 0"
        case .negativeConvertedUnits(let variant, let metric, let value):
            return "metric '\(metric)' of variant '\(variant)' has \(value) converted units; expected 0 or more"
        case .convertedUnitsExceedExposed(let variant, let metric, let converted, let exposed):
            return "metric '\(metric)' of variant '\(variant)' has \(converted) converted units but the variant "
                + "has only \(exposed) exposed units; expected at most \(exposed)"
        case .nonFiniteSum(let variant, let metric, let field, let value):
            return "metric '\(metric)' of variant '\(variant)' has \(field) \(value); expected a finite number"
        case .negativeSumOfSquares(let variant, let metric, let field, let value):
            return "metric '\(metric)' of variant '\(variant)' has \(field) \(value); expected 0 or more"
        case .invalidConfiguration(let field, let value, let expected):
            return "configuration \(field) is \(value); expected \(expected)"
        }
    }
}
