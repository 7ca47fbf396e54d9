package import VaneCore

/// Checks an experiment against the template it runs on: its parameters and its variants'
/// conditions must be there, each variant's condition must be a random split (only `percent`
/// rules: a targeting rule would put a kind of user, not a random sample, in the variant, and
/// every difference measured would be that kind's), and each must change at least one of its
/// parameters (else the variant's units would see control's values and the test measures nothing).
package enum ExperimentTemplateCheck {
    /// Every problem, at the definition's JSON path; empty when the experiment can run.
    package static func issues(
        _ definition: ExperimentDefinition,
        against template: ConfigTemplate,
        version: Int64
    ) -> [ValidationIssue] {
        let live = version == 0 ? "nothing is published yet" : "the live template (version \(version))"
        var issues: [ValidationIssue] = []
        let parameters = definition.parameters.map { template.parameter(forKey: $0) }
        for (index, key) in definition.parameters.enumerated() where parameters[index] == nil {
            issues.append(
                ValidationIssue(
                    .error,
                    at: JSONPath.root.appending("parameters").appending(index),
                    rule: "unknown-parameter",
                    version == 0
                        ? "\(live): publish a template with parameter \"\(key)\" first"
                        : "\(live) has no parameter \"\(key)\"; publish it first"
                )
            )
        }
        let conditions = Dictionary(template.conditions.map { ($0.name, $0) }) { first, _ in first }
        for (index, variant) in definition.variants.enumerated() {
            guard let condition = variant.condition else { continue }
            let path = JSONPath.root.appending("variants").appending(index).appending("condition")
            guard let templateCondition = conditions[condition] else {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: path,
                        rule: "unknown-condition",
                        "\(live) has no condition \"\(condition)\"; add it (normally a percent condition with the experiment's seed) and publish first"
                    )
                )
                continue
            }
            if let refusal = randomSplitRefusal(ParsedCondition(templateCondition)) {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: path,
                        rule: "not-random-split",
                        "variant \"\(variant.name)\": condition \"\(condition)\" \(refusal), not a random split; a variant's "
                            + "condition may have only percent rules, such as percent('\(definition.key)') between 0 and 50"
                    )
                )
                continue
            }
            let used = parameters.contains { $0?.conditionalValue(for: condition) != nil }
            if !used {
                issues.append(
                    ValidationIssue(
                        .error,
                        at: path,
                        rule: "unused-condition",
                        "none of the experiment's parameters has a value for condition \"\(condition)\", so variant \"\(variant.name)\" would see the same values as units that match no condition"
                    )
                )
            }
        }
        return issues
    }

    /// Whether a condition is a random split of the units: it matches by `percent` rules alone,
    /// joined by and, or and not.
    package static func isRandomSplit(_ condition: ParsedCondition) -> Bool {
        randomSplitRefusal(condition) == nil
    }

    /// Why a condition is not a random split ("tests device.country, a targeting rule"), or nil
    /// when it is.
    private static func randomSplitRefusal(_ condition: ParsedCondition) -> String? {
        guard let expression = condition.expression else { return "does not parse" }
        var attributes: Set<String> = []
        var hasPercent = false
        func visit(_ node: ConditionExpression) {
            switch node {
            case .constant: break
            case .and(let children), .or(let children): children.forEach(visit)
            case .not(let child): visit(child)
            case .percent: hasPercent = true
            case .attribute(let rule): attributes.insert(rule.attributeName)
            }
        }
        visit(expression)
        if !attributes.isEmpty {
            return "tests \(attributes.sorted().joined(separator: ", ")), a targeting rule"
        }
        return hasPercent ? nil : "has no percent rule"
    }
}
