import Crypto
import VaneCore
import VaneServerCore

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
/// * `variant`, on every successful evaluation (OpenFeature's OFREP providers read it
///   unconditionally): the value itself when it is a Boolean, number or string of at most
///   ``maximumVariantBytes`` UTF-8 bytes (an experiment's variant name); for a JSON value or a
///   longer string, an opaque stable name made from the value: `value-` and the first 16 hex
///   digits of the SHA-256 of its text, so equal values share a variant and analytics can group
///   them. Never the condition's name: condition names describe the targeting, which a client key
///   must not learn.
/// * Left to the app (`useInAppDefault`, a Firebase-managed value) → `DISABLED` with no
///   `value` (OFREP's `codeDefaultFlag`); no condition matched and no default value → `DEFAULT`
///   with no `value`. Both carry the empty variant `""`: there is no value to name.
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
            object["variant"] = .string(OFREPEvaluation.variant(value, text: configValue.stringValue))
        case .useInAppDefault, .managed:
            object["reason"] = "DISABLED"
            object["variant"] = ""
        case .noDefaultValue:
            object["reason"] = "DEFAULT"
            object["variant"] = ""
        }
        if !metadata.isEmpty { object["metadata"] = .object(metadata) }
        self.json = object
        self.isFailure = false
    }

    /// The variant of a value: its text when short and not JSON, else `value-` and a short hash of
    /// `text`, the value as the template holds it.
    static func variant(_ value: JSONValue, text: String) -> String {
        let short: String?
        switch value {
        case .string(let string): short = string
        case .bool, .number: short = value.serialized()
        default: short = nil
        }
        if let short, short.utf8.count <= maximumVariantBytes { return short }
        let digest = SHA256.hash(data: Array(text.utf8))
        return "value-" + Array(digest.prefix(8)).withUnsafeBytes { Hex.encode($0) }
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
