package import VaneCore

/// The one rule for naming and renaming a condition, for the console's condition editor and the
/// API's `POST …/conditions/{name}/rename`: a name is checked, and a rename moves every
/// conditional value of the old name to the new one, so no flag loses its targeting.
package enum ConditionRenaming {
    /// The longest condition name, in characters.
    package static let maximumNameLength = 256

    /// What is wrong with `name` for the condition at `index` of `template` (nil for a new
    /// condition), or nil when it is a good name.
    package static func problem(with name: String, in template: ConfigTemplate, at index: Int?) -> String? {
        if name.isEmpty { return "Give the condition a name." }
        if name.count > maximumNameLength {
            return "A condition's name has at most \(maximumNameLength) characters."
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "A condition's name cannot contain line breaks or other control characters."
        }
        if let other = template.conditions.indices.first(where: { $0 != index && template.conditions[$0].name == name })
        {
            return "Condition \(other + 1) is already called \(name); names must be unique."
        }
        return nil
    }

    /// The template with every conditional value for `old` now for `new` (the condition itself
    /// is left as it is).
    package static func movingValues(from old: String, to new: String, in template: ConfigTemplate) -> ConfigTemplate {
        func renamed(_ parameter: TemplateParameter) -> TemplateParameter {
            var parameter = parameter
            parameter.conditionalValues = parameter.conditionalValues.map {
                $0.conditionName == old ? ConditionalValue(conditionName: new, value: $0.value) : $0
            }
            return parameter
        }
        var template = template
        template.parameters = template.parameters.map(renamed)
        for group in template.parameterGroups.indices {
            template.parameterGroups[group].parameters = template.parameterGroups[group].parameters.map(renamed)
        }
        return template
    }

    /// The template with condition `old` called `new`, its conditional values following.
    /// - Throws: ``ConditionRenameRefusal`` for a condition that does not exist or a bad new name.
    package static func renaming(
        _ old: String,
        to new: String,
        in template: ConfigTemplate
    ) throws(ConditionRenameRefusal) -> ConfigTemplate {
        guard let index = template.conditions.firstIndex(where: { $0.name == old }) else {
            throw .noSuchCondition(old)
        }
        if let problem = problem(with: new, in: template, at: index) { throw .badName(problem) }
        var result = movingValues(from: old, to: new, in: template)
        result.conditions[index].name = new
        return result
    }
}

/// Why a condition cannot be renamed; each case says what to do instead.
package enum ConditionRenameRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchCondition(String)
    case badName(String)

    package var description: String {
        switch self {
        case .noSuchCondition(let name): "the live template has no condition \"\(name.prefix(256))\""
        case .badName(let problem): problem
        }
    }
}
