package import VaneCore

/// Small, pure changes to a template, for the console's one-click actions.
package enum TemplateEdits {
    /// The template with the parameter of the same key replaced where it lives (at the top level
    /// or in its group); nil when the template has no such key.
    package static func replacing(_ parameter: TemplateParameter, in template: ConfigTemplate) -> ConfigTemplate? {
        var template = template
        if let index = template.parameters.firstIndex(where: { $0.key == parameter.key }) {
            template.parameters[index] = parameter
            return template
        }
        for groupIndex in template.parameterGroups.indices {
            if let index = template.parameterGroups[groupIndex].parameters.firstIndex(where: { $0.key == parameter.key }
            ) {
                template.parameterGroups[groupIndex].parameters[index] = parameter
                return template
            }
        }
        return nil
    }

    /// The template without the parameter `key` (at the top level or in its group); nil when the
    /// template has no such key.
    package static func removing(_ key: String, from template: ConfigTemplate) -> ConfigTemplate? {
        var template = template
        if let index = template.parameters.firstIndex(where: { $0.key == key }) {
            template.parameters.remove(at: index)
            return template
        }
        for groupIndex in template.parameterGroups.indices {
            if let index = template.parameterGroups[groupIndex].parameters.firstIndex(where: { $0.key == key }) {
                template.parameterGroups[groupIndex].parameters.remove(at: index)
                return template
            }
        }
        return nil
    }
}
