/// A condition expression that does not parse, with where and why.
///
/// ```
/// condition "ios_us", column 14: expected a string in single quotes, found "ios"
/// ```
public struct ConditionSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name of the condition, when the caller gave one.
    public var conditionName: String?
    /// The whole expression that failed to parse.
    public var expression: String
    /// Where the problem starts: 1-based, counted in Characters.
    public var column: Int
    /// What the parser expected there, such as `a string in single quotes`.
    public var expected: String
    /// What it found there, such as `"ios"` or `the end of the condition`.
    public var found: String

    /// Creates an error.
    public init(conditionName: String? = nil, expression: String, column: Int, expected: String, found: String) {
        self.conditionName = conditionName
        self.expression = expression
        self.column = column
        self.expected = expected
        self.found = found
    }

    /// `condition "name", column N: expected X, found Y`.
    public var description: String {
        let location = conditionName.map { "condition \"\($0)\", column \(column)" } ?? "column \(column)"
        return "\(location): expected \(expected), found \(found)"
    }
}
