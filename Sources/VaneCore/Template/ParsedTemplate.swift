/// A template with its conditions parsed once: what validation, compilation and serving share.
///
/// Parsing conditions is the costly part of reading a template. A server publishing a version
/// validates it, compiles it and inspects its conditions; with a `ParsedTemplate` each condition
/// is parsed once for all three (`validate()` is VaneAuthoring's).
///
/// ```swift
/// let parsed = ParsedTemplate(template)
/// let issues = parsed.validate()              // import VaneAuthoring
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

    /// Parses `template`'s conditions, taking `earlier`'s parse of every condition with the same
    /// name and the same source instead of parsing it again: a draft's or a new version's
    /// conditions are mostly those of the version before it.
    public init(_ template: ConfigTemplate, reusing earlier: ParsedTemplate) {
        self.template = template
        var known: [String: Int] = [:]
        for (index, condition) in earlier.template.conditions.enumerated() where known[condition.name] == nil {
            known[condition.name] = index
        }
        conditions = template.conditions.map { condition in
            if let index = known[condition.name], earlier.template.conditions[index].source == condition.source {
                return earlier.conditions[index]
            }
            return ParsedCondition(condition)
        }
    }
}
