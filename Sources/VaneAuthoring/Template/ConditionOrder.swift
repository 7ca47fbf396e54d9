public import VaneCore

/// Changing the order of a template's conditions, which decides which value a user gets.
extension ConfigTemplate {
    /// The template with the condition `name` moved to just above `other` in the order (the
    /// fix for a ``ShadowedValue``); nil when either is missing or `name` is already above.
    public func movingCondition(_ name: String, above other: String) -> ConfigTemplate? {
        guard let from = conditions.firstIndex(where: { $0.name == name }),
            let target = conditions.firstIndex(where: { $0.name == other }), from > target
        else { return nil }
        var moved = self
        let condition = moved.conditions.remove(at: from)
        moved.conditions.insert(condition, at: target)
        return moved
    }

    /// The template with the named conditions in the given order, each taking the place one of
    /// them had (the others keep theirs): a flag's conditions reordered among themselves. Nil when
    /// a name is unknown or repeated.
    public func reorderingConditions(_ names: [String]) -> ConfigTemplate? {
        let wanted = Set(names)
        guard wanted.count == names.count else { return nil }
        var byName: [String: TemplateCondition] = [:]
        var slots: [Int] = []
        for (index, condition) in conditions.enumerated() where wanted.contains(condition.name) {
            guard byName[condition.name] == nil else { return nil }
            byName[condition.name] = condition
            slots.append(index)
        }
        guard slots.count == names.count else { return nil }
        var reordered = self
        for (slot, name) in zip(slots, names) {
            guard let condition = byName[name] else { return nil }
            reordered.conditions[slot] = condition
        }
        return reordered
    }
}
