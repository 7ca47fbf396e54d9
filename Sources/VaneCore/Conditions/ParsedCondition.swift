/// One template condition, parsed: its expression, or why there is none.
public struct ParsedCondition: Sendable, Equatable {
    /// The condition's name.
    public let name: String
    /// The parsed tree; nil when the expression does not parse (see ``syntaxError``).
    public let expression: ConditionExpression?
    /// Why a client-template expression does not parse.
    public let syntaxError: ConditionSyntaxError?
    /// What a server-template tree has that Firebase reads as `false` (it reads nonetheless).
    public let structuredIssues: [StructuredConditionIssue]

    /// Parses a condition as written.
    public init(_ condition: TemplateCondition) {
        name = condition.name
        switch condition.source {
        case .expression(let text):
            do {
                expression = try ConditionParser.parse(text, conditionName: condition.name)
                syntaxError = nil
            } catch {
                expression = nil
                syntaxError = error
            }
            structuredIssues = []
        case .structured(let json):
            let read = StructuredConditionReader.read(json)
            expression = read.expression
            syntaxError = nil
            structuredIssues = read.issues
        }
    }

    /// Whether the condition has a `percent` rule, so its matches are splits of the users.
    public var containsPercent: Bool { expression?.containsPercent ?? false }
}
