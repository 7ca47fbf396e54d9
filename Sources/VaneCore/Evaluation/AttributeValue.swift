public import Foundation

/// A typed value of one attribute in an ``EvaluationContext``.
///
/// Rules convert values the way Firebase's Node Admin SDK does, so a template evaluates alike
/// on Vane and on Firebase: string rules read a number through JavaScript's `String(n)`
/// (`5.0` is `"5"`), numeric rules read a string through `Number(s)` (`" 5 "` is 5).
public enum AttributeValue: Sendable, Hashable {
    /// Text, such as a country code or an app version.
    case string(String)
    /// A number.
    case number(Double)
    /// A Boolean.
    case bool(Bool)
    /// An instant, such as the first-open time.
    case date(Date)
    /// A list of strings, such as the audiences a user belongs to.
    case stringList([String])
}

extension AttributeValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral
{
    /// Creates a string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates a number value.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// Creates a number value.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// Creates a Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates a list value.
    public init(arrayLiteral elements: String...) { self = .stringList(elements) }
}
