import VaneAuthoring
package import VaneCore

/// How a rollout appears in a template: two managed conditions at the end of the condition
/// order, and a conditional value on each of its parameters for each.
///
/// - `rollout_<id>` (the treatment): the audience and `percent('<seed>') <= k`, the step's share;
///   its units get the new value. The seed is the rollout's own, so a unit below k stays below
///   every larger k: membership only grows.
/// - `rollout_<id>_comparison`: the audience and `percent('<seed>') > 100 − c`, a slice of the
///   rest the size of the treatment (c = min(k, 100 − k)); its units get the parameter's default
///   value, what they got before, but fetch marks it, so their exposures are counted as the
///   comparison arm's.
///
/// Being last in the condition order, both lose to every condition of the template: a unit a
/// targeting rule already decides for keeps that value and is in neither arm.
package enum RolloutTemplate {
    /// The template with the rollout at `percent`: any earlier form of it replaced.
    /// - Throws: ``RolloutTemplateError`` when a parameter or the audience is not in the template.
    package static func applying(
        _ plan: RolloutPlan,
        percent: Double,
        to template: ConfigTemplate
    ) throws(RolloutTemplateError) -> ConfigTemplate {
        let issues = problems(plan, in: template)
        guard issues.isEmpty else { throw RolloutTemplateError(issues: issues) }
        var result = removing(plan.id, from: template)
        let audience = try audienceText(plan, in: template)
        let seed = "percent('\(plan.seed)')"
        let prefix = audience.map { "(\($0)) && " } ?? ""
        let treatment = RolloutPlan.treatmentCondition(plan.id)
        let comparison = RolloutPlan.comparisonCondition(plan.id)
        result.conditions.append(
            TemplateCondition(name: treatment, expression: prefix + "\(seed) <= \(RolloutPlan.percentText(percent))")
        )
        let comparisonShare = RolloutPlan.comparisonShare(percent)
        if comparisonShare > 0 {
            result.conditions.append(
                TemplateCondition(
                    name: comparison,
                    expression: prefix + "\(seed) > \(RolloutPlan.percentText(100 - comparisonShare))"
                )
            )
        }
        for change in plan.parameters {
            guard var parameter = result.allParameters.first(where: { $0.key == change.key }) else { continue }
            parameter.conditionalValues.append(
                ConditionalValue(conditionName: treatment, value: .value(change.value))
            )
            if comparisonShare > 0 {
                parameter.conditionalValues.append(
                    ConditionalValue(conditionName: comparison, value: parameter.defaultValue ?? .useInAppDefault)
                )
            }
            result = TemplateEdits.replacing(parameter, in: result) ?? result
        }
        return result
    }

    /// The template without the rollout: its conditions and their conditional values removed,
    /// so everyone gets what they got before it.
    package static func removing(_ id: String, from template: ConfigTemplate) -> ConfigTemplate {
        let managed: Set<String> = [RolloutPlan.treatmentCondition(id), RolloutPlan.comparisonCondition(id)]
        var result = template
        result.conditions.removeAll { managed.contains($0.name) }
        for parameter in template.allParameters
        where parameter.conditionalValues.contains(where: {
            managed.contains($0.conditionName)
        }) {
            var changed = parameter
            changed.conditionalValues.removeAll { managed.contains($0.conditionName) }
            result = TemplateEdits.replacing(changed, in: result) ?? result
        }
        return result
    }

    /// Every reason the plan does not fit the template: parameters it lacks, an audience
    /// condition it lacks or that is the rollout's own.
    package static func problems(_ plan: RolloutPlan, in template: ConfigTemplate) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        let keys = Set(template.allParameters.map(\.key))
        for (index, change) in plan.parameters.enumerated() where !keys.contains(change.key) {
            issues.append(
                ValidationIssue(
                    .error,
                    at: JSONPath.root.appending("parameters").appending(index).appending("key"),
                    rule: "unknown-parameter",
                    "the live template has no parameter \"\(change.key)\"; publish it first, then roll its new value out"
                )
            )
        }
        if let audience = plan.audience {
            let managed: Set<String> = [
                RolloutPlan.treatmentCondition(plan.id), RolloutPlan.comparisonCondition(plan.id),
            ]
            if managed.contains(audience) || !template.conditions.contains(where: { $0.name == audience }) {
                let known = template.conditions.map(\.name).filter { !managed.contains($0) }.prefix(20)
                issues.append(
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("audience"),
                        rule: "unknown-condition",
                        "the live template has no condition \"\(audience)\"; conditions: "
                            + (known.isEmpty ? "none" : known.joined(separator: ", "))
                            + ", or null for everyone"
                    )
                )
            }
        }
        return issues
    }

    /// The audience's expression in Vane syntax, nil for everyone.
    private static func audienceText(
        _ plan: RolloutPlan,
        in template: ConfigTemplate
    ) throws(RolloutTemplateError)
        -> String?
    {
        guard let name = plan.audience, let condition = template.conditions.first(where: { $0.name == name }) else {
            return nil
        }
        guard let expression = ParsedCondition(condition).expression else {
            throw RolloutTemplateError(issues: [
                ValidationIssue(
                    .error,
                    at: JSONPath.root.appending("audience"),
                    rule: "condition-syntax",
                    "condition \"\(name)\" does not parse; fix it in the template first"
                )
            ])
        }
        return expression.expressionText
    }
}

/// A plan that does not fit the live template; every problem with its path in the plan.
package struct RolloutTemplateError: Error, Sendable, CustomStringConvertible {
    package var issues: [ValidationIssue]

    package var description: String { RolloutPlanReader.summary(issues) }
}
