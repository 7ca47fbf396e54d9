/// The values one user gets from a template, with the reason for each.
///
/// Reads are a dictionary lookup plus an array index: cheap enough for a hot path.
///
/// ```swift
/// let result = compiled.evaluate(context)
/// result.bool(forKey: "new_checkout", default: false)
/// result.resolution(forKey: "new_checkout")?.matchedCondition   // "beta_testers"
/// ```
public struct EvaluationResult: Sendable {
    /// The compiled template this result came from.
    public let template: CompiledTemplate
    /// Per parameter: -1 for the default value, else the index of the winning conditional value.
    @usableFromInline let choices: [Int32]

    init(template: CompiledTemplate, choices: [Int32]) {
        self.template = template
        self.choices = choices
    }

    /// The value for a key, or nil when the key is not in the template or is left to the app's
    /// own default (`useInAppDefault`, a managed value, no default value).
    public subscript(key: String) -> CoercedValue? {
        guard let index = template.parameterIndex[key] else { return nil }
        return template.parameters[index].outcome(choice: choices[index]).value
    }

    /// The value as a Boolean, or `defaultValue` when it is missing or not a Boolean.
    ///
    /// ```swift
    /// let result = compiled.evaluate(EvaluationContext(randomizationId: user.id))
    /// if result.bool(forKey: "new_checkout", default: false) { showNewCheckout() }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The parameter's key.
    ///   - defaultValue: What to answer when the template leaves the key to the app or its value
    ///     is not a Boolean.
    public func bool(forKey key: String, default defaultValue: Bool) -> Bool {
        self[key]?.boolValue ?? defaultValue
    }

    /// The value as an integer, or `defaultValue` when it is missing or not an integer.
    /// - Parameters:
    ///   - key: The parameter's key.
    ///   - defaultValue: What to answer when the template leaves the key to the app or its value
    ///     is not an integer.
    public func int(forKey key: String, default defaultValue: Int) -> Int {
        self[key]?.intValue ?? defaultValue
    }

    /// The value as a number, or `defaultValue` when it is missing or not a number.
    /// - Parameters:
    ///   - key: The parameter's key.
    ///   - defaultValue: What to answer when the template leaves the key to the app or its value
    ///     is not a number.
    public func double(forKey key: String, default defaultValue: Double) -> Double {
        self[key]?.doubleValue ?? defaultValue
    }

    /// The value as a string, or `defaultValue` when it is missing.
    /// - Parameters:
    ///   - key: The parameter's key.
    ///   - defaultValue: What to answer when the template leaves the key to the app.
    public func string(forKey key: String, default defaultValue: String) -> String {
        self[key]?.stringValue ?? defaultValue
    }

    /// Exactly the keys and values a client receives, in template order.
    public var entries: [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = []
        entries.reserveCapacity(choices.count)
        for (index, parameter) in template.parameters.enumerated() {
            if let value = parameter.outcome(choice: choices[index]).value {
                entries.append((parameter.key, value.stringValue))
            }
        }
        return entries
    }

    /// Calls `body` for every parameter, in the order of ``CompiledTemplate/keys``, with the branch
    /// that won: 0 for the default value, `n` for the `n`-th entry of
    /// ``CompiledTemplate/outcomes(ofParameterAt:)``. A branch without a value (`useInAppDefault`, no
    /// default value) is reported too: the caller's precomputed table says it sends nothing.
    ///
    /// For servers that precompute each branch's encoded form and assemble responses from them: no
    /// value is read, so the loop costs no reference counting. Inlinable, so the loop and `body`
    /// become one (a server assembling a response calls it for every parameter of every request).
    @inlinable
    public func forEachBranch(_ body: (_ parameterIndex: Int, _ branch: Int) throws -> Void) rethrows {
        try choices.withUnsafeBufferPointer { choices in
            for index in 0..<choices.count { try body(index, Int(choices[index]) + 1) }
        }
    }

    /// The key-value map a client receives.
    public var values: [String: String] {
        Dictionary(entries, uniquingKeysWith: { first, _ in first })
    }

    /// How the parameter with this key was decided.
    public func resolution(forKey key: String) -> ParameterResolution? {
        template.parameterIndex[key].map(resolution(at:))
    }

    /// How every parameter was decided, in template order, including those left to the app.
    public var resolutions: [ParameterResolution] {
        template.parameters.indices.map(resolution(at:))
    }

    private func resolution(at index: Int) -> ParameterResolution {
        let parameter = template.parameters[index]
        let choice = choices[index]
        return ParameterResolution(
            key: parameter.key,
            outcome: parameter.outcome(choice: choice),
            matchedCondition: choice < 0 ? nil : parameter.conditionals[Int(choice)].conditionName
        )
    }
}

/// How one parameter was decided for one user: the answer to "why did this user get this?".
public struct ParameterResolution: Sendable, Hashable {
    /// The parameter's key.
    public let key: String
    /// What the user gets.
    public let outcome: ResolutionOutcome
    /// The condition whose value won, or nil when no condition matched and the default applied.
    public let matchedCondition: String?

    /// Creates a resolution.
    public init(key: String, outcome: ResolutionOutcome, matchedCondition: String?) {
        self.key = key
        self.outcome = outcome
        self.matchedCondition = matchedCondition
    }

    /// The value the user gets, or nil when the app's own default applies.
    public var value: CoercedValue? { outcome.value }
}

/// The outcome of resolving one parameter.
public enum ResolutionOutcome: Sendable, Hashable {
    /// The client receives this value.
    case value(CoercedValue)
    /// The chosen value is `useInAppDefault`: the key is left out and the app's default applies.
    case useInAppDefault
    /// The chosen value is managed by a Firebase service (its field name given), which Vane
    /// cannot evaluate: the key is left out, as with `useInAppDefault`.
    case managed(String)
    /// No condition matched and the parameter has no default value: the key is left out.
    case noDefaultValue

    init(_ value: ParameterValue) {
        switch value.kind {
        case .value(let string): self = .value(CoercedValue(string))
        case .useInAppDefault: self = .useInAppDefault
        case .managed(let kind): self = .managed(kind)
        }
    }

    /// The value the client receives, if any.
    public var value: CoercedValue? {
        if case .value(let value) = self { return value }
        return nil
    }
}
