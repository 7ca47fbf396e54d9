public import Foundation

/// A template compiled for evaluation: conditions parsed into trees, values pre-read into
/// ``CoercedValue``s. Compile once per published version, then evaluate for any number of users.
///
/// A compiled template is immutable, so ``evaluate(_:at:)`` runs from any number of threads at
/// once without locks.
///
/// ```swift
/// let compiled = try CompiledTemplate(template)
/// let result = compiled.evaluate(EvaluationContext(randomizationId: "user-42", attributes: ["device.country": "de"]))
/// let showBanner = result.bool(forKey: "show_banner", default: false)
/// ```
public final class CompiledTemplate: Sendable {
    /// The template as written.
    public let template: ConfigTemplate
    /// Every condition's tree, flattened; conditions are numbered in template order, leaving out
    /// none (the template compiles only when all parse).
    let program: ConditionProgram
    let parameters: [CompiledParameter]
    let parameterIndex: [String: Int]
    /// The hot loop's view of the parameters: for parameter `p`, its conditional values'
    /// condition indices are `conditionalConditions[conditionalStarts[p]..<conditionalStarts[p + 1]]`.
    /// Plain integers, so walking them costs no reference counting.
    let conditionalStarts: [Int32]
    let conditionalConditions: [Int32]
    /// Every condition some conditional value names, in template order: ``evaluate(_:at:)``
    /// evaluates them first, one after the other, so the walk reads the program in the order it
    /// lies in memory instead of jumping about it parameter by parameter.
    let namedConditions: [Int32]
    /// How results depend on the current time.
    let clock: ClockDependence

    /// Compiles a template.
    ///
    /// Conditional values naming a condition the template lacks are ignored, as are parameters
    /// repeated under another group (the first wins); `validate(options:)` (VaneAuthoring)
    /// reports both.
    ///
    /// ```swift
    /// let compiled = try CompiledTemplate(ConfigTemplate(data: templateData))
    /// ```
    ///
    /// - Parameter template: The template, as read from Firebase or Vane JSON.
    /// - Throws: ``TemplateCompilationError`` listing every condition expression that does not parse.
    public convenience init(_ template: ConfigTemplate) throws(TemplateCompilationError) {
        try self.init(ParsedTemplate(template))
    }

    /// Compiles a template whose conditions are already parsed (no condition is parsed again).
    ///
    /// - Parameter parsed: The template with its conditions parsed.
    /// - Throws: ``TemplateCompilationError`` listing every condition expression that does not parse.
    public init(_ parsed: ParsedTemplate) throws(TemplateCompilationError) {
        let template = parsed.template
        self.template = template
        var issues: [ValidationIssue] = []
        var expressions: [ConditionExpression] = []
        var conditionIndex: [String: Int] = [:]
        for (index, condition) in parsed.conditions.enumerated() {
            guard let expression = condition.expression else {
                let path = JSONPath.root.appending("conditions").appending(index).appending("expression")
                let message = condition.syntaxError?.description ?? "the condition does not parse"
                issues.append(ValidationIssue(.error, at: path, rule: "condition-syntax", message))
                continue
            }
            if conditionIndex[condition.name] == nil { conditionIndex[condition.name] = expressions.count }
            expressions.append(expression)
        }
        guard issues.isEmpty else { throw TemplateCompilationError(issues: issues) }
        let program = ConditionProgram(expressions)

        var parameters: [CompiledParameter] = []
        var parameterIndex: [String: Int] = [:]
        for parameter in template.allParameters where parameterIndex[parameter.key] == nil {
            parameterIndex[parameter.key] = parameters.count
            parameters.append(CompiledParameter(parameter, conditionIndex: conditionIndex))
        }
        self.program = program
        self.parameters = parameters
        self.parameterIndex = parameterIndex
        var starts: [Int32] = [0]
        var conditionals: [Int32] = []
        for parameter in parameters {
            conditionals.append(contentsOf: parameter.conditionals.map { Int32($0.conditionIndex) })
            starts.append(Int32(conditionals.count))
        }
        self.conditionalStarts = starts
        self.conditionalConditions = conditionals
        self.namedConditions = Set(conditionals).sorted()
        self.clock = ClockDependence(program: program)
    }

    /// Copies every compiled table; only ``template`` differs.
    private init(_ other: CompiledTemplate, template: ConfigTemplate) {
        self.template = template
        program = other.program
        parameters = other.parameters
        parameterIndex = other.parameterIndex
        conditionalStarts = other.conditionalStarts
        conditionalConditions = other.conditionalConditions
        namedConditions = other.namedConditions
        clock = other.clock
    }

    /// The same compiled template with other `version` metadata, without compiling again: for a
    /// server that compiles a version before storing it, and stamps it after.
    public func replacingVersion(_ version: TemplateVersion?) -> CompiledTemplate {
        var stamped = template
        stamped.version = version
        return CompiledTemplate(self, template: stamped)
    }

    /// The keys of every parameter, in template order.
    public var keys: [String] { parameters.map(\.key) }

    /// Every outcome a parameter can have: its default value first, then its conditional values in
    /// template condition order (the branches ``EvaluationResult/forEachBranch(_:)`` reports).
    public func outcomes(ofParameterAt index: Int) -> [ResolutionOutcome] {
        let parameter = parameters[index]
        return [parameter.defaultOutcome] + parameter.conditionals.map(\.outcome)
    }

    /// Every way a parameter can be decided, in the order of ``outcomes(ofParameterAt:)``: its
    /// default value (no deciding condition), then each conditional value with its condition.
    /// Branch `n` of ``EvaluationResult/forEachBranch(_:)`` resolves as element `n`, so a caller
    /// can prepare what it writes for each branch once, not once per result.
    public func resolutions(ofParameterAt index: Int) -> [ParameterResolution] {
        let parameter = parameters[index]
        let conditionals = parameter.conditionals.map { conditional in
            ParameterResolution(
                key: parameter.key,
                outcome: conditional.outcome,
                matchedCondition: conditional.conditionName
            )
        }
        return [ParameterResolution(key: parameter.key, outcome: parameter.defaultOutcome, matchedCondition: nil)]
            + conditionals
    }

    /// Whether the template has a parameter with this key.
    public func containsKey(_ key: String) -> Bool { parameterIndex[key] != nil }

    /// The template's version number, if it has been published.
    public var versionNumber: String? { template.version?.versionNumber }

    /// Until when a result evaluated at `now` stays what it is as far as the passing of time goes:
    /// the first instant at or after `now` at which a `dateTime` rule could change its answer for
    /// this context, or `Date.distantFuture` when none can (the template has no such rule, or the
    /// context pins `dateTime`).
    ///
    /// Everything else a result depends on is in the template and the context, so a server can
    /// tell that a result it computed is still current without evaluating again.
    public func resultUnchangedUntil(for context: EvaluationContext, evaluatedAt now: Date) -> Date {
        // No clock slot, or one the context pins: time does not enter this result.
        guard !clock.pinningAttributes.isEmpty,
            !clock.pinningAttributes.contains(where: { context.attributes[$0] != nil })
        else {
            return .distantFuture
        }
        if clock.changesAnyMoment { return now }
        let seconds = now.timeIntervalSince1970
        guard let next = clock.instants.first(where: { $0 >= seconds }) else { return .distantFuture }
        return Date(timeIntervalSince1970: next)
    }

    /// Evaluates the template for one user.
    ///
    /// For each parameter, the first condition in template order that is true and has a value
    /// for it wins; otherwise the default value applies. Conditions no parameter names are not
    /// evaluated.
    ///
    /// ```swift
    /// let result = compiled.evaluate(EvaluationContext(randomizationId: "user-42", attributes: ["plan": "pro"]))
    /// result.int(forKey: "max_items", default: 20)
    /// ```
    ///
    /// - Parameters:
    ///   - context: The user's randomization id and attributes.
    ///   - now: The evaluation time for `dateTime` rules, unless the context pins `dateTime`.
    public func evaluate(_ context: EvaluationContext, at now: Date = Date()) -> EvaluationResult {
        let count = parameters.count
        let choices = program.withEvaluation(context, now: now, everyAttribute: true) { evaluation in
            namedConditions.withUnsafeBufferPointer { named in
                for condition in named { _ = evaluation.isTrue(condition: Int(condition)) }
            }
            return conditionalStarts.withUnsafeBufferPointer { starts in
                conditionalConditions.withUnsafeBufferPointer { conditionals in
                    [Int32](unsafeUninitializedCapacity: count) { choices, initialized in
                        for parameter in 0..<count {
                            var choice: Int32 = -1
                            let start = Int(starts[parameter])
                            var position = start
                            while position < Int(starts[parameter + 1]) {
                                if evaluation.isTrue(condition: Int(conditionals[position])) {
                                    choice = Int32(position - start)
                                    break
                                }
                                position += 1
                            }
                            choices.initializeElement(at: parameter, to: choice)
                        }
                        initialized = count
                    }
                }
            }
        }
        return EvaluationResult(template: self, choices: choices)
    }

    /// The value of one key for one user: the same answer as `evaluate(context, at: now)[key]`,
    /// evaluating only the conditions that key's conditional values name (the hot path of a
    /// per-key reader such as a swift-configuration provider).
    /// - Parameters:
    ///   - key: The parameter's key.
    ///   - context: The user's randomization id and attributes.
    ///   - now: The evaluation time for `dateTime` rules, unless the context pins `dateTime`.
    /// - Returns: nil when the key is not in the template or is left to the app's own default.
    public func value(forKey key: String, context: EvaluationContext, at now: Date = Date()) -> CoercedValue? {
        guard let parameter = parameterIndex[key] else { return nil }
        let start = Int(conditionalStarts[parameter])
        let end = Int(conditionalStarts[parameter + 1])
        var choice: Int32 = -1
        if start < end {
            choice = program.withEvaluation(context, now: now) { evaluation in
                for position in start..<end where evaluation.isTrue(condition: Int(conditionalConditions[position])) {
                    return Int32(position - start)
                }
                return -1
            }
        }
        return parameters[parameter].outcome(choice: choice).value
    }
}

/// Where the current time enters evaluation: rules on `dateTime` that the context does not pin.
struct ClockDependence: Sendable {
    /// The attribute names under which a context pins `dateTime` (then the clock is not read);
    /// empty when no rule reads the clock.
    let pinningAttributes: [String]
    /// Whether a rule reads the current time other than by comparing it with a fixed instant, so
    /// its answer may change at any moment.
    let changesAnyMoment: Bool
    /// The instants, in seconds since 1970 and ascending, at which a date rule on the current time
    /// can change its answer.
    let instants: [Double]

    init(program: ConditionProgram) {
        let slots = program.slots
        let clockSlots = Set(slots.indices.filter { slots[$0].element == .dateTime })
        var instants = Set<Double>()
        var changesAnyMoment = false
        program.forEachAttributeTest { slot, test in
            guard clockSlots.contains(slot) else { return }
            if let instant = test.comparedInstant { instants.insert(instant) } else { changesAnyMoment = true }
        }
        pinningAttributes = clockSlots.map { slots[$0].name }
        self.changesAnyMoment = changesAnyMoment
        self.instants = instants.sorted()
    }
}

/// A template whose conditions do not all parse.
public struct TemplateCompilationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One issue per condition that failed, with its path and the parser's message.
    public var issues: [ValidationIssue]

    /// One line per issue.
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}

/// A parameter's possible outcomes, its conditional values sorted into template condition order.
struct CompiledParameter: Sendable {
    struct Conditional: Sendable {
        let conditionIndex: Int
        let conditionName: String
        let outcome: ResolutionOutcome
    }

    let key: String
    let defaultOutcome: ResolutionOutcome
    let conditionals: [Conditional]
    let realtime: Bool

    init(_ parameter: TemplateParameter, conditionIndex: [String: Int]) {
        key = parameter.key
        defaultOutcome = parameter.defaultValue.map(ResolutionOutcome.init) ?? .noDefaultValue
        realtime = parameter.metadata?.realtime ?? false
        conditionals = parameter.conditionalValues.compactMap { conditional in
            guard let index = conditionIndex[conditional.conditionName] else { return nil }
            return Conditional(
                conditionIndex: index,
                conditionName: conditional.conditionName,
                outcome: ResolutionOutcome(conditional.value)
            )
        }
        .sorted { $0.conditionIndex < $1.conditionIndex }
    }

    func outcome(choice: Int32) -> ResolutionOutcome {
        choice < 0 ? defaultOutcome : conditionals[Int(choice)].outcome
    }
}
