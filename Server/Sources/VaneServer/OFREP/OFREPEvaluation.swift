import VaneCore

/// One flag's OFREP answer: an `evaluationSuccess` or an `evaluationFailure` object.
///
/// The mapping from Vane's resolution:
/// * `value` has the parameter's `valueType`: `BOOLEAN` → boolean, `NUMBER` → integer when
///   integral, else a number with a fraction, `JSON` → object or array, anything else → string.
///   A value that does not read as its type is an `evaluationFailure` with `GENERAL` (OFREP
///   never sends `TYPE_MISMATCH`).
/// * `reason`: a condition decided → `TARGETING_MATCH` (`SPLIT` when the condition has a percent
///   rule); no conditional values → `STATIC`; the default applied although there are conditional
///   values → `DEFAULT`.
/// * `variant`: the value itself when it is a Boolean, number or string of at most
///   ``maximumVariantBytes`` UTF-8 bytes (an experiment's variant name), else none. Never the
///   condition's name: condition names describe the targeting, which a client key must not learn.
/// * Left to the app (`useInAppDefault`, a Firebase-managed value) → `DISABLED` with no
///   `value` (OFREP's `codeDefaultFlag`); no condition matched and no default value → `DEFAULT`
///   with no `value`.
struct OFREPEvaluation: Sendable {
    /// The JSON object of this flag.
    var json: JSONObject
    /// Whether this is an `evaluationFailure`.
    var isFailure: Bool

    /// The longest value sent again as the `variant`.
    static let maximumVariantBytes = 64

    /// Evaluates one resolution of a served template.
    /// - Parameter templateVersion: added to the flag's metadata when given.
    init(_ resolution: ParameterResolution, served: ServedTemplate, templateVersion: String?) {
        let key = resolution.key
        var metadata = OFREPEvaluation.flatMetadata(served.metadata[key])
        if let templateVersion { metadata["templateVersion"] = .string(templateVersion) }
        var object: JSONObject = ["key": .string(key)]
        switch resolution.outcome {
        case .value(let configValue):
            let type = served.valueTypes[key] ?? .string
            guard let value = OFREPEvaluation.value(configValue, type: type) else {
                object["errorCode"] = .string(OFREPError.Code.general.rawValue)
                object["errorDetails"] = .string(
                    "the value of \"\(key)\" for this context does not read as its valueType \(type); "
                        + "fix the value in the template and publish again"
                )
                if !metadata.isEmpty { object["metadata"] = .object(metadata) }
                self.json = object
                self.isFailure = true
                return
            }
            object["value"] = value
            object["reason"] = .string(OFREPEvaluation.reason(resolution, served: served))
            if let variant = OFREPEvaluation.variant(value) { object["variant"] = .string(variant) }
        case .useInAppDefault, .managed:
            object["reason"] = "DISABLED"
        case .noDefaultValue:
            object["reason"] = "DEFAULT"
        }
        if !metadata.isEmpty { object["metadata"] = .object(metadata) }
        self.json = object
        self.isFailure = false
    }

    /// The variant of a value: its text when short and not JSON.
    static func variant(_ value: JSONValue) -> String? {
        let text: String
        switch value {
        case .string(let string): text = string
        case .bool, .number: text = value.serialized()
        default: return nil
        }
        return text.utf8.count <= maximumVariantBytes ? text : nil
    }

    /// The reason for a value the server serves.
    static func reason(_ resolution: ParameterResolution, served: ServedTemplate) -> String {
        if let condition = resolution.matchedCondition {
            return served.percentConditions.contains(condition) ? "SPLIT" : "TARGETING_MATCH"
        }
        return served.hasConditionalValues.contains(resolution.key) ? "DEFAULT" : "STATIC"
    }

    /// A value as the JSON type its parameter declares, or nil when it does not read as that type.
    static func value(_ value: CoercedValue, type: ParameterValueType) -> JSONValue? {
        switch type {
        case .boolean:
            return value.boolValue.map(JSONValue.bool)
        case .number:
            if let integer = value.intValue { return .number(JSONNumber(integer)) }
            guard let double = value.doubleValue else { return nil }
            return .number(JSONNumber(double))
        case .json:
            guard let json = try? JSONValue.parse(value.stringValue) else { return nil }
            switch json {
            case .object, .array: return json
            default: return nil
            }
        default:
            return .string(value.stringValue)
        }
    }

    /// The members of a parameter's Vane metadata that OFREP's flat `metadata` can carry
    /// (strings, numbers, Booleans: `title`, `category`, `realtime`).
    static func flatMetadata(_ metadata: JSONValue?) -> JSONObject {
        var flat = JSONObject()
        guard case .object(let object)? = metadata else { return flat }
        for member in object {
            switch member.value {
            case .string, .number, .bool: flat[member.key] = member.value
            default: continue
            }
        }
        return flat
    }
}
