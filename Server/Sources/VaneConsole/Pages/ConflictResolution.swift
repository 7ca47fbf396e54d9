import VaneAuthoring
import VaneCore
import VaneServerCore

/// Settling the conflicts of a ``TemplateMerge`` one by one: for each, keep the draft's side
/// ("mine") or what is live ("theirs").
///
/// It works by changing the merge's base: a side that equals the base made no change, so the
/// other side's change wins. Keeping mine sets the base's item to theirs; taking theirs sets it to
/// mine. Merging again with that base then has no conflict on the item, and everything the two
/// sides changed without conflict merges as before.
enum ConflictResolution {
    /// Which side wins a conflict.
    enum Choice: String, Sendable {
        /// The draft's version.
        case mine
        /// The live version.
        case theirs
    }

    /// Merges again with every conflict settled as chosen.
    /// - Parameter choices: One per conflict of `TemplateMerge(base:theirs:ours:)`, in its order.
    /// - Returns: The merge of the adjusted base; its `merged` is set when every conflict had a
    ///   choice.
    static func merge(
        base: ConfigTemplate,
        theirs: ConfigTemplate,
        ours: ConfigTemplate,
        choices: [TemplateMerge.Conflict.Subject: Choice]
    ) -> TemplateMerge {
        var adjusted = base
        for (subject, choice) in choices {
            // The side that should lose becomes the base, so it "made no change".
            let loser = choice == .mine ? theirs : ours
            switch subject {
            case .parameter(let key):
                adjusted = copyingParameter(key, from: loser, into: adjusted)
            case .condition(let name):
                adjusted = copyingCondition(name, from: loser, into: adjusted)
            case .conditionOrder:
                adjusted = orderingConditions(of: adjusted, like: loser)
            case .settings:
                adjusted.settings = loser.settings
                adjusted.unknownFields = loser.unknownFields
                for index in adjusted.parameterGroups.indices {
                    let name = adjusted.parameterGroups[index].name
                    if let group = loser.parameterGroups.first(where: { $0.name == name }) {
                        adjusted.parameterGroups[index].description = group.description
                        adjusted.parameterGroups[index].unknownFields = group.unknownFields
                    }
                }
            }
        }
        return TemplateMerge(base: adjusted, theirs: theirs, ours: ours)
    }

    /// `template` with its parameter `key` made exactly as in `source`: same definition, same
    /// group, or absent when `source` lacks it.
    static func copyingParameter(
        _ key: String,
        from source: ConfigTemplate,
        into template: ConfigTemplate
    )
        -> ConfigTemplate
    {
        var result = TemplateEdits.removing(key, from: template) ?? template
        if let parameter = source.parameters.first(where: { $0.key == key }) {
            result.parameters.append(parameter)
            return result
        }
        for group in source.parameterGroups {
            guard let parameter = group.parameters.first(where: { $0.key == key }) else { continue }
            if let index = result.parameterGroups.firstIndex(where: { $0.name == group.name }) {
                result.parameterGroups[index].parameters.append(parameter)
            } else {
                result.parameterGroups.append(
                    ParameterGroup(
                        name: group.name,
                        description: group.description,
                        parameters: [parameter],
                        unknownFields: group.unknownFields
                    )
                )
            }
            return result
        }
        return result
    }

    /// `template` with its condition `name` made exactly as in `source` (kept in place when both
    /// have it, at the end when only `source` does, removed when `source` lacks it).
    static func copyingCondition(
        _ name: String,
        from source: ConfigTemplate,
        into template: ConfigTemplate
    )
        -> ConfigTemplate
    {
        var result = template
        let index = result.conditions.firstIndex { $0.name == name }
        switch (index, source.conditions.first { $0.name == name }) {
        case (let index?, let condition?): result.conditions[index] = condition
        case (nil, let condition?): result.conditions.append(condition)
        case (let index?, nil): result.conditions.remove(at: index)
        case (nil, nil): break
        }
        return result
    }

    /// `template`'s conditions reordered so those `source` also has come in `source`'s order
    /// (the others keep their places).
    static func orderingConditions(of template: ConfigTemplate, like source: ConfigTemplate) -> ConfigTemplate {
        let rank = Dictionary(
            source.conditions.enumerated().map { ($1.name, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        var result = template
        let slots = result.conditions.indices.filter { rank[result.conditions[$0].name] != nil }
        let sorted = slots.map { result.conditions[$0] }.sorted {
            (rank[$0.name] ?? 0) < (rank[$1.name] ?? 0)
        }
        for (slot, condition) in zip(slots, sorted) { result.conditions[slot] = condition }
        return result
    }
}
