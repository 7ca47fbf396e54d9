public import VaneCore

/// A conditional value that can never decide: a condition earlier in the template's order, for
/// which the same parameter has a value too, matches every context its own condition matches.
///
/// Found by ``ConditionImplication`` (proved, never guessed); validation reports each as the
/// warning `shadowed-value`, and the console offers to move ``condition`` above ``shadowedBy``.
public struct ShadowedValue: Sendable, Hashable {
    /// The parameter's key.
    public var parameterKey: String
    /// The condition of the value that never decides.
    public var condition: String
    /// The earlier condition that decides instead.
    public var shadowedBy: String

    /// Creates a finding.
    public init(parameterKey: String, condition: String, shadowedBy: String) {
        self.parameterKey = parameterKey
        self.condition = condition
        self.shadowedBy = shadowedBy
    }

    /// One sentence for people: which condition shadows which value of which parameter.
    public var message: String {
        "\(parameterKey)'s value for \(condition) never decides: \(shadowedBy) comes first in the condition order "
            + "and matches every user \(condition) matches. Move \(condition) above \(shadowedBy)."
    }
}

extension ParsedTemplate {
    /// Every shadowed conditional value, parameters in template order (groups after the
    /// top level), each reported with the first condition in order that shadows it.
    public func shadowedValues() -> [ShadowedValue] {
        var position: [String: Int] = [:]
        for (index, condition) in template.conditions.enumerated() where position[condition.name] == nil {
            position[condition.name] = index
        }
        var implied: [Pair: Bool] = [:]
        var found: [ShadowedValue] = []
        for parameter in template.allParameters where parameter.conditionalValues.count > 1 {
            let used = parameter.conditionalValues.compactMap { position[$0.conditionName] }.sorted()
            for (rank, index) in used.enumerated() {
                guard let narrow = conditions[index].expression else { continue }
                for earlier in used[..<rank] {
                    guard let broad = conditions[earlier].expression else { continue }
                    let pair = Pair(narrow: index, broad: earlier)
                    let holds = implied[pair] ?? ConditionImplication.implies(narrow, broad)
                    implied[pair] = holds
                    if holds {
                        found.append(
                            ShadowedValue(
                                parameterKey: parameter.key,
                                condition: template.conditions[index].name,
                                shadowedBy: template.conditions[earlier].name
                            )
                        )
                        break
                    }
                }
            }
        }
        return found
    }

    /// The names of conditions no parameter has a value for, in template order.
    public func unusedConditions() -> [String] {
        var used: Set<String> = []
        for parameter in template.allParameters {
            for value in parameter.conditionalValues { used.insert(value.conditionName) }
        }
        return template.conditions.map(\.name).filter { !used.contains($0) }
    }

    private struct Pair: Hashable {
        var narrow: Int
        var broad: Int
    }
}
