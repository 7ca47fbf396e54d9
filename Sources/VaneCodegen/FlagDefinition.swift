public import VaneCore

/// One flag of a flags file: its key, type, default and debug-menu details.
public struct FlagDefinition: Sendable, Hashable {
    /// The key as the server spells it.
    public var key: String
    /// The value type.
    public var type: FlagType
    /// The default value as config text (what `InAppDefaults` holds), or nil for none.
    public var defaultValue: String?
    /// The flag's title, description (the generated doc comment), section, allowed values and
    /// realtime marker.
    public var metadata: KeyMetadata
    /// For JSON flags: the `Decodable` Swift type the value decodes into, if the file names one.
    public var swiftType: String?
    /// Where the flag is in its file, for messages.
    public var path: JSONPath

    /// Creates a definition.
    public init(
        key: String,
        type: FlagType,
        defaultValue: String?,
        description: String? = nil,
        title: String? = nil,
        category: String? = nil,
        allowedValues: [String] = [],
        realtime: Bool = false,
        swiftType: String? = nil,
        path: JSONPath = .root
    ) {
        self.key = key
        self.type = type
        self.defaultValue = defaultValue
        self.metadata = KeyMetadata(
            title: title,
            description: description,
            category: category,
            allowedValues: allowedValues,
            realtime: realtime
        )
        self.swiftType = swiftType
        self.path = path
    }

    /// What the flag controls; becomes the doc comment.
    public var description: String? {
        get { metadata.description }
        set { metadata.description = newValue }
    }
    /// A short human name for the debug menu.
    public var title: String? {
        get { metadata.title }
        set { metadata.title = newValue }
    }
    /// The debug-menu section.
    public var category: String? {
        get { metadata.category }
        set { metadata.category = newValue }
    }
    /// The only values a string flag takes; empty for any.
    public var allowedValues: [String] {
        get { metadata.allowedValues }
        set { metadata.allowedValues = newValue }
    }
    /// Whether live updates may apply the flag at once.
    public var realtime: Bool {
        get { metadata.realtime }
        set { metadata.realtime = newValue }
    }
}

/// A flag's value type.
public enum FlagType: Sendable, Hashable {
    /// `true` or `false`.
    case bool
    /// A whole number.
    case int
    /// A number.
    case double
    /// Text.
    case string
    /// A JSON object or array.
    case json
    /// An A/B test: one of the named variants.
    case experiment(variants: [String])

    /// The name in a flags file.
    public var name: String {
        switch self {
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .json: return "json"
        case .experiment: return "experiment"
        }
    }

    /// The template `valueType` that matches.
    public var valueType: ParameterValueType {
        switch self {
        case .bool: return .boolean
        case .int, .double: return .number
        case .string, .experiment: return .string
        case .json: return .json
        }
    }
}
