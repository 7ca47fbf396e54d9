public import VaneCore

/// Turns a Vane template into one Firebase Remote Config accepts, and says what it had to leave out.
///
/// Vane's metadata (`vane` members) is dropped. Client-template conditions are rewritten in
/// Firebase's strict syntax (spaces around `&&`, none inside method calls). A condition Firebase
/// cannot express — it uses `||`, `!`, or a string with a quote in it — is left out together
/// with the conditional values that name it, and each one is reported, so nothing is lost
/// silently.
public enum FirebaseExport {
    /// What an export produced.
    public struct Output: Sendable, Hashable {
        /// The Firebase-compatible template.
        public var template: ConfigTemplate
        /// One issue per condition left out, with its path in the original template and the reason.
        public var omissions: [ValidationIssue]

        /// Whether the export lost nothing.
        public var isLossless: Bool { omissions.isEmpty }
    }

    /// Exports a template for Firebase.
    public static func export(_ template: ConfigTemplate) -> Output {
        var exported = template
        exported.settings = TemplateSettings()
        var omissions: [ValidationIssue] = []
        var dropped: Set<String> = []
        exported.conditions = []
        for (index, condition) in template.conditions.enumerated() {
            guard case .expression(let text) = condition.source else {
                exported.conditions.append(condition)
                continue
            }
            let path = JSONPath.root.appending("conditions").appending(index).appending("expression")
            let expression: ConditionExpression
            do {
                expression = try ConditionParser.parse(text, conditionName: condition.name)
            } catch {
                omissions.append(
                    ValidationIssue(.error, at: path, rule: "firebase-export", "left out: \(error.description)")
                )
                dropped.insert(condition.name)
                continue
            }
            switch expression.firebaseExpression() {
            case .success(let firebaseText):
                var rewritten = condition
                rewritten.source = .expression(firebaseText)
                exported.conditions.append(rewritten)
            case .failure(let incompatibility):
                omissions.append(
                    ValidationIssue(
                        .error,
                        at: path,
                        rule: "firebase-export",
                        "condition \"\(condition.name)\" left out, with its conditional values: \(incompatibility.message)"
                    )
                )
                dropped.insert(condition.name)
            }
        }
        exported.parameters = exported.parameters.map { firebaseParameter($0, dropping: dropped) }
        for index in exported.parameterGroups.indices {
            exported.parameterGroups[index].parameters = exported.parameterGroups[index].parameters.map {
                firebaseParameter($0, dropping: dropped)
            }
        }
        return Output(template: exported, omissions: omissions)
    }

    private static func firebaseParameter(
        _ parameter: TemplateParameter,
        dropping dropped: Set<String>
    ) -> TemplateParameter {
        var result = parameter
        result.metadata = nil
        result.conditionalValues.removeAll { dropped.contains($0.conditionName) }
        return result
    }
}
