package import VaneCore

/// The kill switch of a Boolean flag, in a template that has no on/off state of its own.
///
/// Off: every explicit value of the flag — the one for users who match no condition and each
/// conditional value — becomes `false`, so nobody gets `true`, whatever condition they match.
/// On: the flag comes back as it was before it was switched off (its newest earlier form in
/// which someone got `true`), conditional values included; a flag that was never on gets
/// `true` for users who match no condition.
package enum KillSwitch {
    /// Whether a flag is a Boolean one the switch applies to.
    package static func applies(to parameter: TemplateParameter) -> Bool {
        parameter.valueType == .boolean
    }

    /// How many of the flag's explicit values are `true`, and how many values it has.
    package static func trueCount(_ parameter: TemplateParameter) -> (true: Int, all: Int) {
        let values = [parameter.defaultValue].compactMap { $0 } + parameter.conditionalValues.map(\.value)
        let trues = values.filter { $0.stringValue?.lowercased() == "true" }.count
        return (trues, values.count)
    }

    /// Whether anybody can get `true`.
    package static func isOn(_ parameter: TemplateParameter) -> Bool {
        trueCount(parameter).true > 0
    }

    /// The flag with every explicit value `false`.
    package static func switchedOff(_ parameter: TemplateParameter) -> TemplateParameter {
        var parameter = parameter
        parameter.defaultValue = .value("false")
        parameter.conditionalValues = parameter.conditionalValues.map {
            ConditionalValue(conditionName: $0.conditionName, value: .value("false"))
        }
        return parameter
    }

    /// The flag switched back on: `earlier` holds its forms in older versions, newest first.
    /// Conditional values whose condition no longer exists in `template` are dropped.
    package static func switchedOn(
        _ parameter: TemplateParameter,
        earlier: [TemplateParameter],
        in template: ConfigTemplate
    ) -> TemplateParameter {
        guard var restored = earlier.first(where: isOn) else {
            var parameter = parameter
            parameter.defaultValue = .value("true")
            return parameter
        }
        let conditions = Set(template.conditions.map(\.name))
        restored.conditionalValues = restored.conditionalValues.filter { conditions.contains($0.conditionName) }
        // Only the values come back: title, description and category stay as they are now.
        var parameter = parameter
        parameter.defaultValue = restored.defaultValue
        parameter.conditionalValues = restored.conditionalValues
        return parameter
    }
}
