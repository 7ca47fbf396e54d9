package import Foundation
package import VaneCore

/// For one context: which of a template's conditions it matches, and its bucket for each
/// `percent` rule. The console's "Who gets what" marks each of a flag's conditions matched,
/// not matched or shadowed (matched, but a condition above it decided) with it.
///
/// Whether a condition matches is asked of the engine itself: a template with the same
/// conditions and one probe parameter per condition, true only under that condition.
package struct ConditionStates: Sendable {
    /// One `percent` rule of a condition, and where the context falls.
    package struct PercentReading: Sendable, Hashable {
        /// The rule's seed; empty for none.
        package var seed: String
        /// The context's bucket under that seed, in micro-percents (0 … 99,999,999).
        package var microPercentile: UInt64
        /// Whether the bucket is in the rule's range.
        package var inRange: Bool

        /// `37.123456 %`: the bucket as a percentage, to the micro-percent.
        package var percentText: String {
            String(format: "%.6f %%", Double(microPercentile) / 1_000_000)
        }
    }

    /// The names of the conditions the context matches.
    package var matched: Set<String>
    /// Each condition's `percent` rules, by condition name (only conditions that have one, and
    /// only when the context has a randomization id).
    package var percents: [String: [PercentReading]]

    /// The states of `template`'s conditions for `context` at `now`.
    /// - Throws: ``TemplateCompilationError`` when the template's conditions do not compile.
    package init(
        context: EvaluationContext,
        template: ConfigTemplate,
        at now: Date = Date()
    ) throws(TemplateCompilationError) {
        let probes = template.conditions.enumerated().map { index, condition in
            TemplateParameter(
                key: "condition\(index)",
                defaultValue: .value("false"),
                conditionalValues: [ConditionalValue(conditionName: condition.name, value: .value("true"))]
            )
        }
        let compiled = try CompiledTemplate(ConfigTemplate(conditions: template.conditions, parameters: probes))
        let result = compiled.evaluate(context, at: now)
        var matched = Set<String>()
        for (index, condition) in template.conditions.enumerated()
        where result.resolution(forKey: "condition\(index)")?.matchedCondition == condition.name {
            matched.insert(condition.name)
        }
        self.matched = matched
        var percents: [String: [PercentReading]] = [:]
        if let id = context.randomizationId {
            for parsed in ParsedTemplate(template).conditions {
                guard let expression = parsed.expression else { continue }
                let rules = Self.percentRules(expression)
                guard !rules.isEmpty else { continue }
                percents[parsed.name] = rules.map { rule in
                    let bucket = PercentBucket.microPercentile(seed: rule.seed, randomizationId: id)
                    return PercentReading(
                        seed: rule.seed,
                        microPercentile: bucket,
                        inRange: rule.range.contains(microPercentile: bucket)
                    )
                }
            }
        }
        self.percents = percents
    }

    /// Every `percent` rule in an expression, in reading order.
    static func percentRules(_ expression: ConditionExpression) -> [PercentCondition] {
        switch expression {
        case .percent(let rule): [rule]
        case .and(let operands), .or(let operands): operands.flatMap(percentRules)
        case .not(let operand): percentRules(operand)
        case .constant, .attribute: []
        }
    }

    /// How each of a flag's conditional values stands for the context, in template condition
    /// order (the order evaluation tries them): the first matched one decides, later matched
    /// ones are shadowed by it.
    package func states(
        of parameter: TemplateParameter,
        in template: ConfigTemplate
    ) -> [(condition: String, state: State)] {
        let used = Set(parameter.conditionalValues.map(\.conditionName))
        var decided: String?
        return template.conditions.filter { used.contains($0.name) }.map { condition in
            guard matched.contains(condition.name) else { return (condition.name, .notMatched) }
            if let decided { return (condition.name, .shadowed(by: decided)) }
            decided = condition.name
            return (condition.name, .matched)
        }
    }

    /// A conditional value's state for the context.
    package enum State: Sendable, Hashable {
        /// The context matches the condition and it decides the flag's value.
        case matched
        /// The context does not match the condition.
        case notMatched
        /// The context matches, but a condition above it (named) decides the flag.
        case shadowed(by: String)
    }
}
