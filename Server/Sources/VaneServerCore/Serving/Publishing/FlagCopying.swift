package import VaneCore

/// Copying a flag from one environment's template into another's, and adding a new flag to
/// several templates at once: the one rule the admin API and the console share. Pure: the
/// caller reads the templates and decides where the result goes (the console into the
/// person's draft of the target, the API back to the caller to review and publish).
package enum FlagCopying {
    /// A copy's outcome in the target template.
    package struct Copy: Sendable {
        /// The target template with the flag copied in.
        package var template: ConfigTemplate
        /// The conditions the flag needs that the target lacked, added after its own (so they
        /// take the lowest priority there).
        package var addedConditions: [String]
        /// Whether the target had the flag already (its values are replaced; where it lives,
        /// top level or group, stays).
        package var replaced: Bool
    }

    /// `target` with the flag `key` of `source`: its values, type, description and metadata,
    /// and every condition its conditional values use.
    /// - Throws: ``FlagCopyRefusal/noSuchFlag(_:)`` when `source` has no such flag;
    ///   ``FlagCopyRefusal/conditionDiffers(_:source:target:)`` when the target has a condition
    ///   of the same name that says something else (copying would change other flags there).
    package static func copy(
        _ key: String,
        from source: ConfigTemplate,
        into target: ConfigTemplate
    ) throws(FlagCopyRefusal) -> Copy {
        guard let parameter = source.parameter(forKey: key) else { throw .noSuchFlag(key) }
        var template = target
        var added: [String] = []
        for name in Self.conditionNames(parameter, in: source) {
            guard let condition = source.condition(named: name) else { continue }
            if let existing = target.condition(named: name) {
                guard existing.source == condition.source else {
                    throw .conditionDiffers(
                        name,
                        source: Self.text(condition),
                        target: Self.text(existing)
                    )
                }
            } else {
                template.conditions.append(condition)
                added.append(name)
            }
        }
        if let replaced = TemplateEdits.replacing(parameter, in: template) {
            return Copy(template: replaced, addedConditions: added, replaced: true)
        }
        template.parameters.append(parameter)
        return Copy(template: template, addedConditions: added, replaced: false)
    }

    /// A new flag of `source` added to `target`, which must not have it yet, with the
    /// conditions it needs: what "create in every environment" does for each other environment.
    /// - Throws: ``FlagCopyRefusal/flagExists(_:)``, and what ``copy(_:from:into:)`` throws.
    package static func adding(
        _ key: String,
        from source: ConfigTemplate,
        into target: ConfigTemplate
    ) throws(FlagCopyRefusal) -> Copy {
        guard target.parameter(forKey: key) == nil else { throw .flagExists(key) }
        return try copy(key, from: source, into: target)
    }

    /// The conditions a flag's conditional values use, in the source's condition order.
    static func conditionNames(_ parameter: TemplateParameter, in template: ConfigTemplate) -> [String] {
        let used = Set(parameter.conditionalValues.map(\.conditionName))
        return template.conditions.map(\.name).filter { used.contains($0) }
    }

    /// A condition's expression, or a note for a server-template tree.
    static func text(_ condition: TemplateCondition) -> String {
        switch condition.source {
        case .expression(let text): text
        case .structured: "(a server-template condition)"
        }
    }
}

/// Why a flag cannot be copied or added; each case says what to do instead.
package enum FlagCopyRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchFlag(String)
    case flagExists(String)
    case conditionDiffers(String, source: String, target: String)
    case sameEnvironment

    package var description: String {
        switch self {
        case .noSuchFlag(let key):
            "the source has no flag \"\(key.prefix(100))\""
        case .flagExists(let key):
            "\"\(key.prefix(100))\" exists there already; edit it instead, or copy it from another environment"
        case .conditionDiffers(let name, let source, let target):
            "the condition \"\(name.prefix(100))\" is \(source.prefix(200)) in the source but \(target.prefix(200)) in the target; make them the same (or rename one) first, since changing it would change every flag that uses it there"
        case .sameEnvironment:
            "choose another environment to copy to: the flag is already here"
        }
    }
}
