import Foundation

/// Who is asking: the randomization id and attributes that conditions are evaluated against.
///
/// Attribute names are the condition language's element names (`app.version`, `device.os`,
/// `device.country`, `device.language`, …); `app.customSignal['plan']` and
/// `app.userProperty['plan']` both read the attribute `plan`. The attribute `dateTime` pins the
/// evaluation time; without it, rules on `dateTime` use the current time.
///
/// ```swift
/// let context = EvaluationContext(
///     randomizationId: installationID,
///     attributes: ["app.version": "2.4.0", "device.country": "de", "plan": "pro"]
/// )
/// ```
public struct EvaluationContext: Sendable, Hashable {
    /// The stable id that `percent` rules bucket; OpenFeature calls it the targeting key.
    /// Without one, every `percent` rule is false.
    public var randomizationId: String?
    /// The attributes, by name.
    public var attributes: [String: AttributeValue]

    /// Creates a context.
    public init(randomizationId: String? = nil, attributes: [String: AttributeValue] = [:]) {
        self.randomizationId = randomizationId
        self.attributes = attributes
    }

    /// The attribute with this name, if the context has it.
    public subscript(name: String) -> AttributeValue? {
        get { attributes[name] }
        set { attributes[name] = newValue }
    }

    /// The attribute a built-in element reads, if the context has it.
    public subscript(element: ConditionElement) -> AttributeValue? {
        get { attributes[element.rawValue] }
        set { attributes[element.rawValue] = newValue }
    }
}
