/// What changed between two templates: parameters and conditions added, removed and changed.
///
/// A parameter "changed" when anything about it differs (values, description, type, metadata);
/// a condition when its expression, tree or colour differs. Version metadata is ignored.
public struct TemplateDiff: Sendable, Hashable {
    /// Keys only in the newer template, in its order.
    public var addedParameters: [String]
    /// Keys only in the older template, in its order.
    public var removedParameters: [String]
    /// Keys in both whose definitions differ, in the newer template's order.
    public var changedParameters: [String]
    /// Conditions only in the newer template.
    public var addedConditions: [String]
    /// Conditions only in the older template.
    public var removedConditions: [String]
    /// Conditions in both whose definitions differ (a changed position counts: order decides).
    public var changedConditions: [String]

    /// Compares two templates.
    public init(from old: ConfigTemplate, to new: ConfigTemplate) {
        // `allParameters` concatenates; read each side once (a template may have thousands).
        let oldAll = old.allParameters
        let newAll = new.allParameters
        let oldIndex = Dictionary(oldAll.indices.map { (oldAll[$0].key, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Set(newAll.map(\.key))
        addedParameters = newAll.map(\.key).filter { oldIndex[$0] == nil }
        removedParameters = oldAll.map(\.key).filter { !newKeys.contains($0) }
        changedParameters = newAll.compactMap { parameter in
            guard let index = oldIndex[parameter.key], oldAll[index] != parameter else { return nil }
            return parameter.key
        }
        let oldConditions = Dictionary(old.conditions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newNames = Set(new.conditions.map(\.name))
        addedConditions = new.conditions.map(\.name).filter { oldConditions[$0] == nil }
        removedConditions = old.conditions.map(\.name).filter { !newNames.contains($0) }
        // Order decides which condition wins, so a condition that moved relative to the others
        // kept in both templates has changed; insertions and removals alone move nothing.
        let oldOrder = old.conditions.map(\.name).filter { newNames.contains($0) }
        let newOrder = new.conditions.map(\.name).filter { oldConditions[$0] != nil }
        let oldRank = Dictionary(oldOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let newRank = Dictionary(newOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        changedConditions = new.conditions.compactMap { condition in
            guard let previous = oldConditions[condition.name] else { return nil }
            let moved = oldRank[condition.name] != newRank[condition.name]
            return previous != condition || moved ? condition.name : nil
        }
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        addedParameters.isEmpty && removedParameters.isEmpty && changedParameters.isEmpty && addedConditions.isEmpty
            && removedConditions.isEmpty && changedConditions.isEmpty
    }

    /// `{"parameters": {"added": [...], "removed": [...], "changed": [...]}, "conditions": {...}}`.
    public func json() -> JSONValue {
        func list(_ names: [String]) -> JSONValue { .array(names.map(JSONValue.string)) }
        return [
            "parameters": [
                "added": list(addedParameters), "removed": list(removedParameters), "changed": list(changedParameters),
            ],
            "conditions": [
                "added": list(addedConditions), "removed": list(removedConditions), "changed": list(changedConditions),
            ],
        ]
    }
}
