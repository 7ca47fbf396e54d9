import VaneAuthoring
import VaneCore
import VaneServerCore

/// The diff of two templates as people read it: one plain sentence per change
/// (``ChangeSentence``, the API's diff `summary` too), then each changed item's before and after
/// as readable lines — a value per line, JSON values pretty-printed — with the lines that differ
/// marked.
struct DiffView: Sendable {
    /// One line of a before or after block.
    struct Line: Sendable {
        var text: String
        /// Not on the other side: removed (before) or added (after).
        var changed: Bool
    }

    struct Item: Sendable {
        var name: String
        var kind: String
        var kindLabel: String
        var sentences: [String]
        var before: [Line]
        var after: [Line]
        var hasBefore: Bool
        var hasAfter: Bool
    }

    struct Section: Sendable {
        var title: String
        var items: [Item]
    }

    var empty: Bool
    var sections: [Section]
    /// Every sentence, in order, for pages that show only the summary.
    var sentences: [String]

    init(from old: ConfigTemplate, to new: ConfigTemplate) {
        self.init(from: old, to: new, diff: TemplateDiff(from: old, to: new))
    }

    /// The view of a diff already computed between `old` and `new`.
    init(from old: ConfigTemplate, to new: ConfigTemplate, diff: TemplateDiff) {
        // Only the parameters the diff names, found in one walk over each template.
        let named = Set(diff.addedParameters + diff.changedParameters + diff.removedParameters)
        let oldParameters = old.parameters(forKeys: named)
        let newParameters = new.parameters(forKeys: named)
        let all = diff.sentences(from: old, to: new)
        var parameterSentences: [String: [String]] = [:]
        var conditionSentences: [String: [String]] = [:]
        for sentence in all {
            switch sentence.subject {
            case .parameter(let key): parameterSentences[key, default: []].append(sentence.text)
            case .condition(let name): conditionSentences[name, default: []].append(sentence.text)
            }
        }
        func parameterLines(_ before: Bool, _ key: String) -> [String] {
            (before ? oldParameters : newParameters)[key].map { Self.lines(of: $0, in: before ? old : new) } ?? []
        }
        func conditionLines(_ before: Bool, _ name: String) -> [String] {
            let template = before ? old : new
            guard let index = template.conditions.firstIndex(where: { $0.name == name }) else { return [] }
            return Self.lines(of: template.conditions[index], position: index + 1)
        }
        func items(
            _ lists: [(String, String, [String])],
            sentences: [String: [String]],
            lines: (Bool, String) -> [String]
        ) -> [Item] {
            lists.flatMap { kind, label, names in
                names.map { name in
                    let (before, after) = Self.marked(lines(true, name), lines(false, name))
                    return Item(
                        name: name,
                        kind: kind,
                        kindLabel: label,
                        sentences: sentences[name] ?? [],
                        before: before,
                        after: after,
                        hasBefore: !before.isEmpty,
                        hasAfter: !after.isEmpty
                    )
                }
            }
        }
        let parameters = items(
            [
                ("added", "added", diff.addedParameters), ("changed", "changed", diff.changedParameters),
                ("removed", "removed", diff.removedParameters),
            ],
            sentences: parameterSentences,
            lines: parameterLines
        )
        let conditions = items(
            [
                ("added", "added", diff.addedConditions), ("changed", "changed", diff.changedConditions),
                ("removed", "removed", diff.removedConditions),
            ],
            sentences: conditionSentences,
            lines: conditionLines
        )
        empty = diff.isEmpty
        sentences = all.map(\.description)
        sections = [
            Section(title: "Parameters (\(parameters.count))", items: parameters),
            Section(title: "Conditions (\(conditions.count))", items: conditions),
        ].filter { !$0.items.isEmpty }
    }

    /// Each side's lines, marked where the other side lacks them.
    static func marked(_ before: [String], _ after: [String]) -> ([Line], [Line]) {
        let beforeSet = Set(before)
        let afterSet = Set(after)
        return (
            before.map { Line(text: $0, changed: !afterSet.contains($0)) },
            after.map { Line(text: $0, changed: !beforeSet.contains($0)) }
        )
    }

    /// A flag as lines: each value (conditions in the template's order, then everyone else),
    /// type, description and what people read about it.
    static func lines(of parameter: TemplateParameter, in template: ConfigTemplate) -> [String] {
        var lines: [String] = []
        let order = template.conditions.map(\.name)
        let values = parameter.conditionalValues.sorted {
            (order.firstIndex(of: $0.conditionName) ?? Int.max) < (order.firstIndex(of: $1.conditionName) ?? Int.max)
        }
        for value in values { lines += valueLines("for \(value.conditionName)", value.value) }
        if let value = parameter.defaultValue {
            lines += valueLines("for everyone else", value)
        } else {
            lines.append("for everyone else: no value")
        }
        lines.append("type: \(parameter.valueType?.rawValue ?? "STRING")")
        if let description = parameter.description { lines.append("description: \(description)") }
        if let metadata = parameter.metadata {
            if let title = metadata.title { lines.append("title: \(title)") }
            if let category = metadata.category { lines.append("category: \(category)") }
            if !metadata.allowedValues.isEmpty {
                lines.append("allowed values: \(metadata.allowedValues.joined(separator: ", "))")
            }
            if metadata.realtime { lines.append("realtime") }
        }
        return lines
    }

    /// `label: value` on one line, or the label and a pretty-printed JSON object or array (or a
    /// text of several lines) indented below it.
    static func valueLines(_ label: String, _ value: ParameterValue) -> [String] {
        switch value.kind {
        case .value(let string):
            if string.first == "{" || string.first == "[", let json = try? JSONValue.parse(string) {
                return [label + ":"] + json.serialized(.pretty).split(separator: "\n").map { "  " + $0 }
            }
            let parts = string.split(separator: "\n", omittingEmptySubsequences: false)
            if parts.count > 1 { return [label + ":"] + parts.map { "  " + $0 } }
            return ["\(label): \(string)"]
        case .useInAppDefault: return ["\(label): the app's own default"]
        case .managed(let kind): return ["\(label): a Firebase-managed value (\(kind))"]
        }
    }

    /// A JSON object or array pretty-printed; any other text as it is.
    static func pretty(_ text: String) -> String {
        guard text.first == "{" || text.first == "[", let json = try? JSONValue.parse(text) else { return text }
        return json.serialized(.pretty)
    }

    /// A condition as lines: its place in the order, expression and colour.
    static func lines(of condition: TemplateCondition, position: Int) -> [String] {
        var lines = ["position: \(position)"]
        switch condition.source {
        case .expression(let text): lines.append("matches: \(text)")
        case .structured:
            lines.append(
                "matches: \(ParsedCondition(condition).expression?.expressionText ?? "(a structured condition)")"
            )
        }
        if let color = condition.tagColor { lines.append("colour: \(color)") }
        return lines
    }
}
