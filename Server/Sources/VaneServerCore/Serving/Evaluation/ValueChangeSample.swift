package import Foundation
package import VaneAuthoring
package import VaneCore

/// How many people a change would affect, estimated on a sample of contexts: the saved contexts
/// plus synthetic ones built from the values the templates' conditions test.
///
/// Pure and deterministic: the same templates, saved contexts, count and seed give the same
/// contexts and so the same counts, so a review page can show "changes for 212 of 1,000 sampled
/// users" and get the same answer on every reload and every node.
///
/// ```swift
/// let contexts = ValueChangeSample.contexts(
///     savedContexts: saved, templates: [live, draft], count: 1_000, seed: 1)
/// for change in ValueChangeSample.changes(from: compiledLive, to: compiledDraft, contexts: contexts) {
///     print("\(change.key): \(change.changed) of \(change.of)")
/// }
/// ```
package enum ValueChangeSample {
    /// The synthetic users a review samples, besides the project's saved contexts.
    package static let syntheticCount = 500

    /// What a change does to a sample of users: per key that may change, how many get a
    /// different value. The console's review and the API's `POST …/template/impact` both read it.
    package enum SampleResult: Sendable {
        /// Only descriptions, titles or unused conditions change: nobody's value does.
        case noValueChanges
        /// A side does not compile, so nothing could be evaluated.
        case doesNotCompile
        /// Per key, in key order; `saved` saved contexts and ``syntheticCount`` synthetic users.
        case counts([(key: String, changed: Int, of: Int)], saved: Int)
    }

    /// Per key `to` may change from `from`, how many sampled users get a different value. Only
    /// those keys and the conditions they use are evaluated (``restricted(_:to:)``), so the cost
    /// follows the size of the change, not of the template. Seeded, so every reload and every node
    /// gives the same counts.
    package static func estimate(
        from: ConfigTemplate,
        to: ConfigTemplate,
        diff: TemplateDiff? = nil,
        savedContexts: [SavedContext],
        at now: Date
    ) -> SampleResult {
        let keys = keysThatMayChange(from: from, to: to, diff: diff)
        guard !keys.isEmpty else { return .noValueChanges }
        let wanted = Set(keys)
        let before = restricted(from, to: wanted)
        let after = restricted(to, to: wanted)
        guard let compiledBefore = try? CompiledTemplate(before), let compiledAfter = try? CompiledTemplate(after)
        else { return .doesNotCompile }
        let sample = contexts(
            savedContexts: savedContexts,
            templates: [before, after],
            count: syntheticCount,
            seed: 1
        )
        return .counts(
            changes(from: compiledBefore, to: compiledAfter, contexts: sample, at: now),
            saved: sample.count - syntheticCount
        )
    }

    /// The sample: every saved context that reads as a context (in the order given), then
    /// `count` synthetic ones.
    ///
    /// A synthetic context has a randomization id drawn from `seed` (so `percent` conditions
    /// split the sample as they split real users) and, for every attribute some condition of
    /// `templates` tests, one of the values the conditions name — or none of them (the attribute
    /// left out), each with the same chance. Version and number tests add a value on each side of
    /// their bound; audience tests add each audience alone and an empty list. Date rules add
    /// nothing: they run on the evaluation time.
    package static func contexts(
        savedContexts: [SavedContext],
        templates: [ConfigTemplate],
        count: Int,
        seed: UInt64
    ) -> [EvaluationContext] {
        var contexts = savedContexts.compactMap { try? EvaluationContext(json: $0.context) }
        let candidates = attributeCandidates(templates)
        let names = candidates.keys.sorted()
        var random = SplitMix64(seed: seed)
        for _ in 0..<max(0, count) {
            var context = EvaluationContext(randomizationId: "sample-" + hex(random.next()) + hex(random.next()))
            for name in names {
                guard let values = candidates[name] else { continue }
                // values.count stands for "none of them": the attribute is left out.
                let choice = Int(random.next() % UInt64(values.count + 1))
                if choice < values.count { context.attributes[name] = values[choice] }
            }
            contexts.append(context)
        }
        return contexts
    }

    /// Per key, in key order, how many of `contexts` get a different value from `to` than from
    /// `from` — a different value, or a value on one side and none on the other, as an app
    /// receives them. A key only one side has counts as changed for every context.
    /// - Parameter now: The evaluation time for `dateTime` rules, the same for both sides.
    package static func changes(
        from: CompiledTemplate,
        to: CompiledTemplate,
        contexts: [EvaluationContext],
        at now: Date = Date()
    ) -> [(key: String, changed: Int, of: Int)] {
        let keys = Set(from.keys).union(to.keys).sorted()
        var changed: [String: Int] = [:]
        for context in contexts {
            let before = from.evaluate(context, at: now)
            let after = to.evaluate(context, at: now)
            for key in keys where before[key]?.stringValue != after[key]?.stringValue {
                changed[key, default: 0] += 1
            }
        }
        return keys.map { key in
            let onBothSides = from.containsKey(key) && to.containsKey(key)
            return (key: key, changed: onBothSides ? changed[key, default: 0] : contexts.count, of: contexts.count)
        }
    }

    /// The keys whose value could differ between the two templates for some user, in key order:
    /// keys only one side has, and keys whose default, type, conditional values, or the
    /// conditions those values use (their expressions and their relative order) differ. A change
    /// to a title, description or an unused condition changes no key.
    /// - Parameter diff: `TemplateDiff(from: from, to: to)`, when the caller has it already.
    package static func keysThatMayChange(
        from: ConfigTemplate,
        to: ConfigTemplate,
        diff: TemplateDiff? = nil
    ) -> [String] {
        let diff = diff ?? TemplateDiff(from: from, to: to)
        // Only keys the diff names, or that use a condition it names, can change.
        let conditions = Set(diff.changedConditions + diff.addedConditions + diff.removedConditions)
        var candidates = Set(diff.addedParameters + diff.removedParameters + diff.changedParameters)
        if !conditions.isEmpty {
            for template in [from, to] {
                for parameter in template.allParameters
                where parameter.conditionalValues.contains(where: { conditions.contains($0.conditionName) }) {
                    candidates.insert(parameter.key)
                }
            }
        }
        guard !candidates.isEmpty else { return [] }
        let before = resolutionInputs(from, keys: candidates)
        let after = resolutionInputs(to, keys: candidates)
        return candidates.filter { before[$0] != after[$0] }.sorted()
    }

    /// `template` with only the parameters `keys` names and only the conditions they use, in
    /// their order: every key left evaluates exactly as in `template`, and evaluating it costs
    /// what those keys cost, not the whole template.
    package static func restricted(_ template: ConfigTemplate, to keys: Set<String>) -> ConfigTemplate {
        var template = template
        template.parameters = template.parameters.filter { keys.contains($0.key) }
        for group in template.parameterGroups.indices {
            template.parameterGroups[group].parameters = template.parameterGroups[group].parameters.filter {
                keys.contains($0.key)
            }
        }
        let used = Set(template.allParameters.flatMap { $0.conditionalValues.map(\.conditionName) })
        template.conditions = template.conditions.filter { used.contains($0.name) }
        return template
    }

    /// What one key's value depends on in a template.
    private struct ResolutionInput: Hashable {
        package struct Branch: Hashable {
            package var condition: TemplateCondition.Source?
            package var value: ParameterValue
        }
        package var defaultValue: ParameterValue?
        package var valueType: ParameterValueType?
        /// The conditional values in the template's condition order (the first true one wins),
        /// each with its condition; a value for a missing condition never applies but is kept.
        package var branches: [Branch]
    }

    private static func resolutionInputs(_ template: ConfigTemplate, keys: Set<String>) -> [String: ResolutionInput] {
        var position: [String: Int] = [:]
        for index in template.conditions.indices where position[template.conditions[index].name] == nil {
            position[template.conditions[index].name] = index
        }
        var inputs: [String: ResolutionInput] = [:]
        for parameter in template.parameters(forKeys: keys).values {
            let ordered = parameter.conditionalValues.sorted {
                (position[$0.conditionName] ?? Int.max) < (position[$1.conditionName] ?? Int.max)
            }
            inputs[parameter.key] = ResolutionInput(
                defaultValue: parameter.defaultValue,
                valueType: parameter.valueType,
                branches: ordered.map {
                    ResolutionInput.Branch(
                        condition: position[$0.conditionName].map { template.conditions[$0].source },
                        value: $0.value
                    )
                }
            )
        }
        return inputs
    }

    /// Every attribute the templates' conditions test, with the values worth trying, in the order
    /// they first appear and without repeats.
    package static func attributeCandidates(_ templates: [ConfigTemplate]) -> [String: [AttributeValue]] {
        var candidates: [String: [AttributeValue]] = [:]
        func add(_ name: String, _ value: AttributeValue) {
            var values = candidates[name, default: []]
            if !values.contains(value) { values.append(value) }
            candidates[name] = values
        }
        func visit(_ expression: ConditionExpression) {
            switch expression {
            case .constant, .percent: return
            case .and(let operands), .or(let operands):
                for operand in operands { visit(operand) }
            case .not(let operand): visit(operand)
            case .attribute(let rule):
                let name = rule.attributeName
                switch rule.test {
                case .equals(let target, _, _): add(name, .string(target))
                case .inList(let targets, _):
                    for target in targets { add(name, .string(target)) }
                case .string(let method, let targets):
                    // A regular expression is no sample value; the others are their own match.
                    if method != .matches {
                        for target in targets { add(name, .string(target)) }
                    }
                case .number(_, let target):
                    add(name, .string(target))
                    if let number = Double(target.trimmingCharacters(in: .whitespaces)) {
                        add(name, .number(number - 1))
                        add(name, .number(number + 1))
                    }
                case .version(_, let target):
                    add(name, .string(target))
                    add(name, .string("0"))
                    let first = target.split(separator: ".").first.flatMap { Int($0) } ?? 0
                    add(name, .string("\(first + 1).0.0"))
                case .audience(_, let targets):
                    for target in targets { add(name, .stringList([target])) }
                    add(name, .stringList([]))
                case .date: return
                }
            }
        }
        for template in templates {
            for condition in ParsedTemplate(template).conditions {
                if let expression = condition.expression { visit(expression) }
            }
        }
        return candidates
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
