/// A remote config template: conditions, parameters and version, in Firebase Remote Config's
/// REST format plus Vane's own per-parameter metadata.
///
/// Read one from JSON with ``init(json:)`` or ``init(data:limits:)``, check it with
/// `validate(options:)` (VaneAuthoring), and compile it with ``CompiledTemplate`` to evaluate it for users.
/// Reading and writing is lossless: fields Vane does not know, unknown enum strings and managed
/// values (`rolloutValue`, `experimentValue`, `personalizationValue`) come back out unchanged.
///
/// Both of Firebase's template types are read: client templates, whose conditions are
/// expressions (`device.os == 'ios'`), and server templates, whose conditions are structured
/// trees (`orCondition`, `percent`, `customSignal`).
public struct ConfigTemplate: Sendable, Hashable {
    /// The conditions, highest priority first: the first true one with a value wins.
    public var conditions: [TemplateCondition]
    /// The parameters outside any group, in document order.
    public var parameters: [TemplateParameter]
    /// Named groups of parameters; grouping is for people, clients see one flat set of keys.
    public var parameterGroups: [ParameterGroup]
    /// Who published this version, when and why; nil for a template not yet published.
    public var version: TemplateVersion?
    /// What clients may decide and learn (the top-level `vane` object).
    public var settings: TemplateSettings
    /// Top-level fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates a template.
    public init(
        conditions: [TemplateCondition] = [],
        parameters: [TemplateParameter] = [],
        parameterGroups: [ParameterGroup] = [],
        version: TemplateVersion? = nil,
        settings: TemplateSettings = TemplateSettings(),
        unknownFields: JSONObject = JSONObject()
    ) {
        self.conditions = conditions
        self.parameters = parameters
        self.parameterGroups = parameterGroups
        self.version = version
        self.settings = settings
        self.unknownFields = unknownFields
    }

    /// Every parameter, ungrouped first, then each group's, in document order.
    ///
    /// This copies every parameter; to look at a few, use ``parameter(forKey:)`` or
    /// ``parameters(forKeys:)``, which walk the template in place.
    public var allParameters: [TemplateParameter] {
        var all: [TemplateParameter] = []
        all.reserveCapacity(parameters.count + parameterGroups.reduce(0) { $0 + $1.parameters.count })
        all += parameters
        for group in parameterGroups { all += group.parameters }
        return all
    }

    /// The parameter with this key, wherever it is (the first, if a key is repeated).
    public func parameter(forKey key: String) -> TemplateParameter? {
        if let found = parameters.first(where: { $0.key == key }) { return found }
        for group in parameterGroups {
            if let found = group.parameters.first(where: { $0.key == key }) { return found }
        }
        return nil
    }

    /// The parameters with these keys, wherever they are, keyed by key (the first of a repeated
    /// key): one walk over the template that copies only the parameters asked for.
    public func parameters(forKeys keys: Set<String>) -> [String: TemplateParameter] {
        var found: [String: TemplateParameter] = [:]
        guard !keys.isEmpty else { return found }
        func take(_ list: [TemplateParameter]) {
            for parameter in list where found[parameter.key] == nil && keys.contains(parameter.key) {
                found[parameter.key] = parameter
            }
        }
        take(parameters)
        for group in parameterGroups { take(group.parameters) }
        return found
    }

    /// The condition with this name.
    public func condition(named name: String) -> TemplateCondition? {
        conditions.first { $0.name == name }
    }

    /// Whether the conditions are written as Firebase server-template trees.
    public var isServerTemplate: Bool {
        conditions.contains {
            if case .structured = $0.source { return true }
            return false
        }
    }
}

/// A named condition of a template.
public struct TemplateCondition: Sendable, Hashable {
    /// How the condition is written.
    public enum Source: Sendable, Hashable {
        /// A client-template expression: `device.os == 'ios' && percent <= 20`.
        case expression(String)
        /// A server-template tree (`OneOfCondition`), kept as written.
        case structured(JSONValue)
    }

    /// The name conditional values refer to; unique in a template.
    public var name: String
    /// The condition itself.
    public var source: Source
    /// The colour the Firebase console shows (`BLUE`, `GREEN`, …); display only.
    public var tagColor: String?
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates a condition from an expression.
    public init(name: String, expression: String, tagColor: String? = nil) {
        self.init(name: name, source: .expression(expression), tagColor: tagColor)
    }

    /// Creates a condition.
    public init(name: String, source: Source, tagColor: String? = nil, unknownFields: JSONObject = JSONObject()) {
        self.name = name
        self.source = source
        self.tagColor = tagColor
        self.unknownFields = unknownFields
    }
}

/// A group of parameters, as the Firebase console shows them.
public struct ParameterGroup: Sendable, Hashable {
    /// The group's name.
    public var name: String
    /// What the group is for.
    public var description: String?
    /// The parameters in the group.
    public var parameters: [TemplateParameter]
    /// Fields Vane does not know, kept for writing back.
    public var unknownFields: JSONObject

    /// Creates a group.
    public init(
        name: String,
        description: String? = nil,
        parameters: [TemplateParameter] = [],
        unknownFields: JSONObject = JSONObject()
    ) {
        self.name = name
        self.description = description
        self.parameters = parameters
        self.unknownFields = unknownFields
    }
}
