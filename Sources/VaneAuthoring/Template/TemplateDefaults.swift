public import VaneCore

extension ConfigTemplate {
    /// The template's default values as in-app defaults, like Firebase's `downloadDefaults`:
    /// conditional values are ignored, and parameters whose default is `useInAppDefault`, managed
    /// or missing are left out.
    public var defaultValues: InAppDefaults {
        InAppDefaults(
            allParameters.compactMap { parameter in
                guard let string = parameter.defaultValue?.stringValue else { return nil }
                return InAppDefaults.Entry(
                    key: parameter.key,
                    value: CoercedValue(string),
                    description: parameter.description
                )
            }
        )
    }
}
