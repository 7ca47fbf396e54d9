import VaneAuthoring
import VaneCore
import VaneServerCore

/// The structured diff of two templates with each changed item's before and after.
struct DiffView: Sendable {
    struct Item: Sendable {
        var name: String
        var kind: String
        var kindLabel: String
        var before: String
        var after: String
    }

    struct Section: Sendable {
        var title: String
        var items: [Item]
    }

    var empty: Bool
    var sections: [Section]

    init(from old: ConfigTemplate, to new: ConfigTemplate) {
        self.init(from: old, to: new, diff: TemplateDiff(from: old, to: new))
    }

    /// The view of a diff already computed between `old` and `new`.
    init(from old: ConfigTemplate, to new: ConfigTemplate, diff: TemplateDiff) {
        // Only the parameters the diff names, found in one walk over each template.
        let named = Set(diff.addedParameters + diff.changedParameters + diff.removedParameters)
        let oldParameters = old.parameters(forKeys: named)
        let newParameters = new.parameters(forKeys: named)
        func parameterText(_ before: Bool, _ key: String) -> String {
            let parameters = before ? oldParameters : newParameters
            return parameters[key].map { JSONValue.object($0.json()).serialized(.pretty) } ?? "—"
        }
        func conditionText(_ before: Bool, _ name: String) -> String {
            let template = before ? old : new
            guard let index = template.conditions.firstIndex(where: { $0.name == name }) else { return "—" }
            let condition = template.conditions[index]
            var object = condition.json()
            object["position"] = .number(JSONNumber(Double(index + 1)))
            return JSONValue.object(object).serialized(.pretty)
        }
        func items(
            _ lists: [(String, String, [String])],
            text: (Bool, String) -> String
        ) -> [Item] {
            lists.flatMap { kind, label, names in
                names.map {
                    Item(name: $0, kind: kind, kindLabel: label, before: text(true, $0), after: text(false, $0))
                }
            }
        }
        let parameters = items(
            [
                ("added", "added", diff.addedParameters), ("changed", "changed", diff.changedParameters),
                ("removed", "removed", diff.removedParameters),
            ],
            text: parameterText
        )
        let conditions = items(
            [
                ("added", "added", diff.addedConditions), ("changed", "changed", diff.changedConditions),
                ("removed", "removed", diff.removedConditions),
            ],
            text: conditionText
        )
        empty = diff.isEmpty
        sections = [
            Section(title: "Parameters (\(parameters.count))", items: parameters),
            Section(title: "Conditions (\(conditions.count))", items: conditions),
        ].filter { !$0.items.isEmpty }
    }
}
