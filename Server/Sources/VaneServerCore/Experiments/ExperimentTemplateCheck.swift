package import VaneCore

/// Checks an experiment against the template it runs on: its parameters and its variants'
/// conditions must be there, and each variant's condition must change at least one of its
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
        let conditionNames = Set(template.conditions.map(\.name))
        for (index, variant) in definition.variants.enumerated() {
            guard let condition = variant.condition else { continue }
            let path = JSONPath.root.appending("variants").appending(index).appending("condition")
            guard conditionNames.contains(condition) else {
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
}
