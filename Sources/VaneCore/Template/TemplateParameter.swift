/// One key of a template, with its default value and its values under conditions.
public struct TemplateParameter: Sendable, Hashable {
    /// The key apps read; `^[A-Za-z_][A-Za-z0-9_]*$`, at most 256 characters.
    public var key: String
    /// The value when no condition applies; nil leaves the key out, so the app's default applies.
    public var defaultValue: ParameterValue?
    /// Values under conditions. Their order does not matter: the template's condition order decides.
    public var conditionalValues: [ConditionalValue]
    /// What the parameter does, for people.
    public var description: String?
    /// The type its values must have; nil reads as ``ParameterValueType/string``.
    public var valueType: ParameterValueType?
    /// Vane's own metadata: title, category, allowed values, live-update opt-in.
    public var metadata: ParameterMetadata?
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates a parameter.
    public init(
        key: String,
        defaultValue: ParameterValue? = nil,
        conditionalValues: [ConditionalValue] = [],
        description: String? = nil,
        valueType: ParameterValueType? = nil,
        metadata: ParameterMetadata? = nil,
        unknownFields: JSONObject = JSONObject()
    ) {
        self.key = key
        self.defaultValue = defaultValue
        self.conditionalValues = conditionalValues
        self.description = description
        self.valueType = valueType
        self.metadata = metadata
        self.unknownFields = unknownFields
    }

    /// What people and clients learn about the parameter: its `description` with the title,
    /// category, allowed values and realtime marker of its `vane` member.
    public var keyMetadata: KeyMetadata {
        KeyMetadata(
            title: metadata?.title,
            description: description,
            category: metadata?.category,
            allowedValues: metadata?.allowedValues ?? [],
            realtime: metadata?.realtime ?? false
        )
    }

    /// The value under the named condition, if the parameter has one.
    public func conditionalValue(for conditionName: String) -> ParameterValue? {
        conditionalValues.first { $0.conditionName == conditionName }?.value
    }
}

/// A parameter's value under one condition.
public struct ConditionalValue: Sendable, Hashable {
    /// The condition's name.
    public var conditionName: String
    /// The value served when that condition is the first true one.
    public var value: ParameterValue

    /// Creates a conditional value.
    public init(conditionName: String, value: ParameterValue) {
        self.conditionName = conditionName
        self.value = value
    }
}

/// The declared type of a parameter's values (`valueType`). Values travel as strings; the type
/// is checked at publish time and drives typed reads. Unknown type names are kept as written.
public struct ParameterValueType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name as written in the template.
    public var rawValue: String

    /// Creates a type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Any text (the default).
    public static let string = ParameterValueType(rawValue: "STRING")
    /// `true` or `false`.
    public static let boolean = ParameterValueType(rawValue: "BOOLEAN")
    /// A decimal number such as `42` or `-0.5`.
    public static let number = ParameterValueType(rawValue: "NUMBER")
    /// A JSON document.
    public static let json = ParameterValueType(rawValue: "JSON")
    /// Firebase's "not set", read like ``string``.
    public static let unspecified = ParameterValueType(rawValue: "PARAMETER_VALUE_TYPE_UNSPECIFIED")

    /// The name.
    public var description: String { rawValue }
}

/// Vane's own per-parameter metadata, in the parameter's `vane` member. A Firebase export drops it.
///
/// This is how a template stores a key's ``KeyMetadata`` (read it whole with
/// ``TemplateParameter/keyMetadata``; the description is the parameter's own Firebase field), plus
/// what only publishing needs: ``allowSecrets`` and members Vane does not know, kept for writing back.
///
/// ```json
/// "vane": {"title": "New checkout", "category": "Checkout", "allowedValues": ["true", "false"], "realtime": true}
/// ```
public struct ParameterMetadata: Sendable, Hashable {
    /// A short human name for debug menus.
    public var title: String?
    /// The debug-menu section the parameter appears in.
    public var category: String?
    /// The only values the parameter may take; empty for any.
    public var allowedValues: [String]
    /// Whether a live update may apply a new value at once, rather than at the app's next `activate()`.
    public var realtime: Bool
    /// Whether values that look like credentials are meant to be public (they are refused otherwise).
    public var allowSecrets: Bool
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates metadata.
    public init(
        title: String? = nil,
        category: String? = nil,
        allowedValues: [String] = [],
        realtime: Bool = false,
        allowSecrets: Bool = false,
        unknownFields: JSONObject = JSONObject()
    ) {
        self.title = title
        self.category = category
        self.allowedValues = allowedValues
        self.realtime = realtime
        self.allowSecrets = allowSecrets
        self.unknownFields = unknownFields
    }
}
