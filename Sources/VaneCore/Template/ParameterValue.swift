/// A parameter's value in a template: an explicit string, "use the app's own default", or a
/// value managed by a Firebase service that Vane keeps but cannot evaluate.
///
/// The value keeps the JSON object it was read from, so a managed value such as
/// `{"rolloutValue": {"rolloutId": "r1", "value": "on", "percent": 10}}` is written back
/// byte-for-byte equivalent.
public struct ParameterValue: Sendable, Hashable {
    /// What the value is.
    public enum Kind: Sendable, Hashable {
        /// An explicit value. Always a string, also for numbers, Booleans and JSON.
        case value(String)
        /// The key is left out of what clients receive, so the app's own default applies.
        case useInAppDefault
        /// A value a Firebase service decides (`rolloutValue`, `experimentValue`,
        /// `personalizationValue`, or a kind this version does not know). Vane keeps it and
        /// evaluates it as ``useInAppDefault``.
        case managed(String)
    }

    /// The value's JSON object, as read or as built.
    public private(set) var json: JSONObject

    /// Creates a value from its JSON object.
    public init(json: JSONObject) {
        self.json = json
    }

    /// An explicit value.
    public static func value(_ string: String) -> ParameterValue {
        ParameterValue(json: ["value": .string(string)])
    }

    /// The key is left out, so the app's own default applies.
    public static let useInAppDefault = ParameterValue(json: ["useInAppDefault": .bool(true)])

    /// The managed field names Firebase defines.
    public static let managedKinds: Set<String> = ["rolloutValue", "experimentValue", "personalizationValue"]

    /// What the value is, read from its JSON.
    public var kind: Kind {
        if case .string(let string)? = json["value"] { return .value(string) }
        if case .bool(true)? = json["useInAppDefault"] { return .useInAppDefault }
        for key in json.keys where ParameterValue.managedKinds.contains(key) { return .managed(key) }
        return .managed(json.keys.first ?? "empty")
    }

    /// The explicit string, when the value is one.
    public var stringValue: String? {
        if case .value(let string) = kind { return string }
        return nil
    }
}
