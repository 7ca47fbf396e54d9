public import VaneCore

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
        // Templates may hold thousands of parameters and conditions: compare them where they
        // are, by position, rather than copying each into a keyed dictionary.
        let oldParameters = ParameterPositions(old)
        let newParameters = ParameterPositions(new)
        let oldIndex = Self.firstIndex(of: oldParameters.keys)
        let newIndex = Self.firstIndex(of: newParameters.keys)
        addedParameters = newParameters.keys.filter { oldIndex[$0] == nil }
        removedParameters = oldParameters.keys.filter { newIndex[$0] == nil }
        changedParameters = newParameters.keys.indices.compactMap { position in
            let key = newParameters.keys[position]
            guard let index = oldIndex[key], !newParameters.same(position, as: index, in: oldParameters) else {
                return nil
            }
            return key
        }
        let oldNames = old.conditions.map(\.name)
        let newNames = new.conditions.map(\.name)
        let oldConditions = Self.firstIndex(of: oldNames)
        let newConditions = Self.firstIndex(of: newNames)
        addedConditions = newNames.filter { oldConditions[$0] == nil }
        removedConditions = oldNames.filter { newConditions[$0] == nil }
        // Order decides which condition wins, so a condition that moved relative to the others
        // kept in both templates has changed; insertions and removals alone move nothing.
        let oldRank = Self.firstIndex(of: oldNames.filter { newConditions[$0] != nil })
        let newRank = Self.firstIndex(of: newNames.filter { oldConditions[$0] != nil })
        changedConditions = new.conditions.indices.compactMap { position in
            let name = newNames[position]
            guard let index = oldConditions[name] else { return nil }
            let moved = oldRank[name] != newRank[name]
            return moved || old.conditions[index] != new.conditions[position] ? name : nil
        }
    }

    /// Each name's first position.
    private static func firstIndex(of names: [String]) -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(names.count)
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        return index
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

/// A template's parameters by flat position (ungrouped first, then each group's, as in
/// ``ConfigTemplate/allParameters``), read in place.
private struct ParameterPositions {
    let lists: [[TemplateParameter]]
    let keys: [String]
    let places: [(list: Int, index: Int)]

    init(_ template: ConfigTemplate) {
        lists = [template.parameters] + template.parameterGroups.map(\.parameters)
        var keys: [String] = []
        var places: [(list: Int, index: Int)] = []
        for (list, parameters) in lists.enumerated() {
            for index in parameters.indices {
                keys.append(parameters[index].key)
                places.append((list, index))
            }
        }
        self.keys = keys
        self.places = places
    }

    /// Whether the parameter at `position` equals the one at `other`'s `otherPosition`.
    func same(_ position: Int, as otherPosition: Int, in other: ParameterPositions) -> Bool {
        let place = places[position]
        let otherPlace = other.places[otherPosition]
        return lists[place.list][place.index] == other.lists[otherPlace.list][otherPlace.index]
    }
}
