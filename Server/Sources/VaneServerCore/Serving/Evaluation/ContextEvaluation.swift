package import Foundation
package import VaneCore

/// "Who gets what": every key's value for one context in a template, explained as
/// `vane eval --explain` explains it (``ResolutionExplanation``), beside another template's. The
/// console's "Who gets what" page and the API's `POST …/evaluate` both read it.
package enum ContextEvaluation {
    /// One key's outcome in one template.
    package struct Outcome: Sendable, Equatable {
        /// Why the key has its value; nil when the template has no such key.
        package var explanation: ResolutionExplanation?
        /// The deciding condition's expression, when a condition decided and it has one.
        package var expression: String?

        /// What an app receives; nil for nothing.
        package var sent: String? { explanation?.value }

        package init(_ resolution: ParameterResolution?, template: ConfigTemplate) {
            guard let resolution else {
                explanation = nil
                expression = nil
                return
            }
            let explanation = ResolutionExplanation(resolution)
            self.explanation = explanation
            expression = nil
            if let name = explanation.condition, let condition = template.conditions.first(where: { $0.name == name }) {
                switch condition.source {
                case .expression(let text): expression = text
                case .structured: expression = "(a server-template condition)"
                }
            }
        }
    }

    /// One key: its outcome, and in compare mode the other template's.
    package struct Row: Sendable {
        package var key: String
        package var title: String?
        package var outcome: Outcome
        package var other: Outcome?

        /// Whether an app would receive something else from the other template.
        package var differs: Bool {
            guard let other else { return false }
            return other.sent != outcome.sent || (other.explanation == nil) != (outcome.explanation == nil)
        }
    }

    /// Every key of `template` (in template order), then those only `other` has.
    /// - Throws: ``TemplateCompilationError`` when a template does not compile.
    package static func rows(
        context: EvaluationContext,
        template: ConfigTemplate,
        comparedWith other: ConfigTemplate?,
        at now: Date = Date()
    ) throws(TemplateCompilationError) -> [Row] {
        let compiled = try CompiledTemplate(template)
        let result = compiled.evaluate(context, at: now)
        var otherResult: EvaluationResult?
        if let other { otherResult = try CompiledTemplate(other).evaluate(context, at: now) }
        var keys = compiled.keys
        if let otherResult {
            keys += otherResult.template.keys.filter { !compiled.containsKey($0) }
        }
        return keys.map { key in
            Row(
                key: key,
                title: (template.parameter(forKey: key) ?? other?.parameter(forKey: key))?.keyMetadata.title,
                outcome: Outcome(result.resolution(forKey: key), template: template),
                other: otherResult.map { Outcome($0.resolution(forKey: key), template: $0.template.template) }
            )
        }
    }
}
