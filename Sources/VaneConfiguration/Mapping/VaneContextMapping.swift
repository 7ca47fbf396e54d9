// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import Configuration
public import VaneCore

/// How swift-configuration's per-lookup context becomes Vane's evaluation context.
///
/// The entry named ``randomizationIdKey`` (default `"randomizationId"`) becomes the
/// randomization id that percent rollouts bucket; every other entry becomes an attribute of the
/// same name (strings stay strings, integers and doubles become numbers, Booleans Booleans):
///
/// ```swift
/// let key = ConfigKey("checkout.new-flow",
///                     context: ["randomizationId": .string(user.id), "device.country": .string("de"), "plan": "pro"])
/// config.bool(forKey: key, default: false)
/// ```
@available(VaneServerSDK, *)
public struct VaneContextMapping: Sendable {
    /// The context entry that holds the randomization id.
    public var randomizationIdKey: String

    /// Creates a mapping.
    ///
    /// ```swift
    /// let options = VaneConfigProvider.Options(contextMapping: VaneContextMapping(randomizationIdKey: "userID"))
    /// ```
    ///
    /// - Parameter randomizationIdKey: The context entry that holds the randomization id.
    public init(randomizationIdKey: String = "randomizationId") {
        self.randomizationIdKey = randomizationIdKey
    }

    /// The evaluation context for a lookup's context.
    /// - Parameter context: The lookup's context entries (`ConfigKey`'s `context`).
    /// - Returns: The randomization id from ``randomizationIdKey`` and every other entry as an
    ///   attribute; an anonymous context when `context` is empty.
    public func evaluationContext(for context: [String: ConfigContextValue]) -> EvaluationContext {
        guard !context.isEmpty else { return EvaluationContext() }
        var result = EvaluationContext()
        for (name, value) in context {
            if name == randomizationIdKey {
                result.randomizationId = Self.text(value)
            } else {
                result.attributes[name] = Self.attribute(value)
            }
        }
        return result
    }

    private static func text(_ value: ConfigContextValue) -> String {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return String(flag)
        }
    }

    private static func attribute(_ value: ConfigContextValue) -> AttributeValue {
        switch value {
        case .string(let text): return .string(text)
        case .int(let number): return .number(Double(number))
        case .double(let number): return .number(number)
        case .bool(let flag): return .bool(flag)
        }
    }
}
#endif
