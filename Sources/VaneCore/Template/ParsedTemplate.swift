/// A template with its conditions parsed once: what validation, compilation and serving share.
///
/// Parsing conditions is the costly part of reading a template. A server publishing a version
/// validates it, compiles it and inspects its conditions; with a `ParsedTemplate` each condition
/// is parsed once for all three.
///
/// ```swift
/// let parsed = ParsedTemplate(template)
/// let issues = parsed.validate()
/// guard !issues.contains(where: { $0.severity == .error }) else { … }
/// let compiled = try CompiledTemplate(parsed)
/// ```
public struct ParsedTemplate: Sendable {
    /// The template as written.
    public let template: ConfigTemplate
    /// One entry per element of `template.conditions`, in the same order.
    public let conditions: [ParsedCondition]

    /// Parses every condition of `template`; never throws; what does not parse is recorded in
    /// ``ParsedCondition/syntaxError``.
    public init(_ template: ConfigTemplate) {
        self.template = template
        conditions = template.conditions.map(ParsedCondition.init)
    }

    /// Checks the template; the same issues as ``ConfigTemplate/validate(options:)``, which calls
    /// this.
    public func validate(options: ValidationOptions = .default) -> [ValidationIssue] {
        var validator = TemplateValidator(parsed: self, options: options)
        validator.run()
        return validator.issues
    }
}
