/// What people and debug menus know about a key: a title, what it controls, its section, the values
/// it may take, and whether live updates may apply it at once.
///
/// One model wherever a key is described: a template stores it (the parameter's `description` and
/// its ``ParameterMetadata`` `vane` member, see ``TemplateParameter/keyMetadata``), a fetch
/// response sends it in `metadata`, the SDK keeps it with fetched values and in `KeyDescriptor`s
/// of declared keys, and flags files declare it.
public struct KeyMetadata: Sendable, Hashable {
    /// A short human name.
    public var title: String?
    /// What the key controls.
    public var description: String?
    /// The debug-menu section.
    public var category: String?
    /// The only values the key takes (an experiment's variants); empty for any.
    public var allowedValues: [String]
    /// Whether a live update may apply a new value at once, rather than at the app's next `activate()`.
    public var realtime: Bool
    /// The running experiment this key's value belongs to, and which variant it is; set by the
    /// server per client, never declared.
    public var experiment: ExperimentAssignment?

    /// Creates metadata.
    public init(
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        allowedValues: [String] = [],
        realtime: Bool = false,
        experiment: ExperimentAssignment? = nil
    ) {
        self.title = title
        self.description = description
        self.category = category
        self.allowedValues = allowedValues
        self.realtime = realtime
        self.experiment = experiment
    }

    /// Whether nothing is set.
    public var isEmpty: Bool {
        title == nil && description == nil && category == nil && allowedValues.isEmpty && !realtime
            && experiment == nil
    }

    /// Reads the `metadata.{key}` object of a fetch response (or a cache file): members of the
    /// wrong type are ignored, unknown members too.
    public init(json: JSONObject) {
        self.init(
            title: json["title"]?.stringValue,
            description: json["description"]?.stringValue,
            category: json["category"]?.stringValue,
            allowedValues: json["allowedValues"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            realtime: json["realtime"]?.boolValue ?? false,
            experiment: json["experiment"]?.objectValue.flatMap(ExperimentAssignment.init(json:))
        )
    }

    /// The object ``init(json:)`` reads; members at their default are left out.
    public func json() -> JSONObject {
        var object = JSONObject()
        if let title { object["title"] = .string(title) }
        if let category { object["category"] = .string(category) }
        if !allowedValues.isEmpty { object["allowedValues"] = .array(allowedValues.map { .string($0) }) }
        if realtime { object["realtime"] = .bool(true) }
        if let description { object["description"] = .string(description) }
        if let experiment { object["experiment"] = .object(experiment.json()) }
        return object
    }

    /// This metadata, with what it leaves unset taken from `fallback` (a key's declaration when
    /// the server sent nothing for a field).
    public func filling(from fallback: KeyMetadata?) -> KeyMetadata {
        guard let fallback else { return self }
        return KeyMetadata(
            title: title ?? fallback.title,
            description: description ?? fallback.description,
            category: category ?? fallback.category,
            allowedValues: allowedValues.isEmpty ? fallback.allowedValues : allowedValues,
            realtime: realtime || fallback.realtime,
            experiment: experiment
        )
    }
}
