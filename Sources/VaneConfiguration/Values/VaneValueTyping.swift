// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import Configuration
import Foundation
import VaneCore

/// Vane values read as swift-configuration types, by Vane's one coercion rule.
///
/// | requested type | reads the value as |
/// |---|---|
/// | `string` | its text (a JSON value stays its JSON text) |
/// | `int`, `double`, `bool` | Vane's coercion: `"on"` is true, `"2"` is 2 and 2.0, `"2.5"` is no integer |
/// | `bytes` | base64 text |
/// | `stringArray`, `intArray`, `doubleArray`, `boolArray`, `byteChunkArray` | a JSON array (`["a", "b"]`, `[1, 2]`), else comma-separated text (`a, b`); each element by the rule above |
///
/// A value that does not read as the requested type is an error the reader reports (and then
/// uses the caller's default), never a silently different value.
@available(VaneServerSDK, *)
enum VaneValueTyping {
    /// The content for a value, or nil when it does not read as `type`.
    static func content(_ value: CoercedValue, as type: ConfigType) -> ConfigContent? {
        switch type {
        case .string: return .string(value.stringValue)
        case .int: return value.intValue.map(ConfigContent.int)
        case .double: return value.doubleValue.map(ConfigContent.double)
        case .bool: return value.boolValue.map(ConfigContent.bool)
        case .bytes: return bytes(value.stringValue).map(ConfigContent.bytes)
        case .stringArray: return elements(value.stringValue).map(ConfigContent.stringArray)
        case .intArray: return each(value.stringValue, ValueCoercion.int).map(ConfigContent.intArray)
        case .doubleArray: return each(value.stringValue, ValueCoercion.double).map(ConfigContent.doubleArray)
        case .boolArray: return each(value.stringValue, ValueCoercion.bool).map(ConfigContent.boolArray)
        case .byteChunkArray: return each(value.stringValue, bytes).map(ConfigContent.byteChunkArray)
        }
    }

    private static func bytes(_ text: String) -> [UInt8]? {
        Data(base64Encoded: ValueCoercion.trimmed(text)).map { [UInt8]($0) }
    }

    private static func each<Element>(_ text: String, _ read: (String) -> Element?) -> [Element]? {
        guard let elements = elements(text) else { return nil }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let value = read(element) else { return nil }
            result.append(value)
        }
        return result
    }

    /// The elements' texts: a JSON array of scalars, else the comma-separated parts, trimmed.
    private static func elements(_ text: String) -> [String]? {
        let trimmed = ValueCoercion.trimmed(text)
        if trimmed.hasPrefix("[") {
            guard let array = (try? JSONValue.parse(trimmed))?.arrayValue else { return nil }
            var result: [String] = []
            for element in array {
                switch element {
                case .string(let string): result.append(string)
                case .number(let number): result.append(number.text)
                case .bool(let flag): result.append(flag ? "true" : "false")
                case .null, .array, .object: return nil
                }
            }
            return result
        }
        if trimmed.isEmpty { return [] }
        return trimmed.split(separator: ",", omittingEmptySubsequences: false).map {
            ValueCoercion.trimmed(String($0))
        }
    }
}

/// A Vane value that does not read as the type a lookup asked for.
@available(VaneServerSDK, *)
public struct VaneValueTypeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The swift-configuration key.
    public var configKey: String
    /// The Vane parameter key it maps to.
    public var vaneKey: String
    /// The requested type.
    public var type: ConfigType

    /// What went wrong and what to do (the value itself is left out: it may be secret).
    public var description: String {
        "the Vane value of \(vaneKey) (for \(configKey)) does not read as \(type.rawValue); change the parameter's value in Vane or read the key as a string"
    }
}
#endif
