// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import Configuration
import Vane
public import VaneCore
import VaneService

/// One template version, read through swift-configuration: every lookup evaluates its key for
/// the lookup's context against the same template, so values read from one snapshot agree.
@available(VaneServerSDK, *)
public struct VaneConfigSnapshot: ConfigSnapshot {
    /// The template this snapshot reads.
    public let template: CompiledTemplate
    let service: VaneService
    let options: VaneConfigProvider.Options

    /// The provider's name.
    public var providerName: String { options.name }

    /// Evaluates the key for the key's context and reads the value as `type`.
    /// - Parameters:
    ///   - key: The swift-configuration key, with the lookup's context.
    ///   - type: The type the lookup asks for.
    /// - Returns: The value with its Vane key as `encodedKey`; no value when the template has
    ///   none for the key or leaves it to the app's default.
    /// - Throws: ``VaneValueTypeError`` when the value does not read as `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let vaneKey = options.keyMapping.vaneKey(for: key.components)
        let context = options.contextMapping.evaluationContext(for: key.context)
        guard let value = service.value(forKey: vaneKey, context: context, in: template) else {
            return LookupResult(encodedKey: vaneKey, value: nil)
        }
        guard let content = VaneValueTyping.content(value, as: type) else {
            throw VaneValueTypeError(configKey: key.description, vaneKey: vaneKey, type: type)
        }
        return LookupResult(
            encodedKey: vaneKey,
            value: ConfigValue(content, isSecret: options.secretKeys.contains(vaneKey))
        )
    }
}
#endif
