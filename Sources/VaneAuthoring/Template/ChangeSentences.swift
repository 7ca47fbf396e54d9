public import VaneCore

/// One plain sentence about one change between two templates, such as
/// `banner_text: for germany_app_2_1, 'Frühling!' instead of none`.
public struct ChangeSentence: Sendable, Hashable, CustomStringConvertible {
    /// What the sentence is about.
    public enum Subject: Sendable, Hashable {
        /// A parameter, by key.
        case parameter(String)
        /// A condition, by name.
        case condition(String)
    }

    /// The parameter or condition changed.
    public var subject: Subject
    /// The change, without the subject: `for germany, 'Hallo' instead of 'Hello'`.
    public var text: String

    /// Creates a sentence.
    public init(subject: Subject, text: String) {
        self.subject = subject
        self.text = text
    }

    /// `key: text`, or `condition name: text`.
    public var description: String {
        switch subject {
        case .parameter(let key): return "\(key): \(text)"
        case .condition(let name): return "condition \(name): \(text)"
        }
    }
}

extension TemplateDiff {
    /// One sentence per change the diff names, parameters first (each of its values, type,
    /// description and what people read about it), then conditions (expression, place, colour).
    /// The console's review, diff, rollback and conflict pages and the API's diff show them.
    public func sentences(from old: ConfigTemplate, to new: ConfigTemplate) -> [ChangeSentence] {
        ChangeSentenceBuilder(old: old, new: new, diff: self).build()
    }
}

/// Writes the sentences of a ``TemplateDiff``.
struct ChangeSentenceBuilder {
    let old: ConfigTemplate
    let new: ConfigTemplate
    let diff: TemplateDiff

    /// Longest value shown in a sentence, in characters; the page's blocks show the whole value.
    static let maximumValueLength = 80

    func build() -> [ChangeSentence] {
        let named = Set(diff.addedParameters + diff.changedParameters + diff.removedParameters)
        let oldParameters = old.parameters(forKeys: named)
        let newParameters = new.parameters(forKeys: named)
        var sentences: [ChangeSentence] = []
        for key in diff.addedParameters {
            guard let parameter = newParameters[key] else { continue }
            sentences += added(parameter)
        }
        for key in diff.changedParameters {
            guard let before = oldParameters[key], let after = newParameters[key] else { continue }
            sentences += changed(before, after)
        }
        for key in diff.removedParameters {
            let was = oldParameters[key].map { ", which gave \(Self.text($0.defaultValue)) to everyone else" } ?? ""
            sentences.append(ChangeSentence(subject: .parameter(key), text: "removed\(was)"))
        }
        for name in diff.addedConditions {
            guard let index = new.conditions.firstIndex(where: { $0.name == name }) else { continue }
            sentences.append(
                ChangeSentence(
                    subject: .condition(name),
                    text: "added at position \(index + 1), matching \(Self.expression(new.conditions[index]))"
                )
            )
        }
        for name in diff.changedConditions {
            guard let from = old.conditions.firstIndex(where: { $0.name == name }),
                let to = new.conditions.firstIndex(where: { $0.name == name })
            else { continue }
            sentences += changed(old.conditions[from], at: from, new.conditions[to], at: to)
        }
        for name in diff.removedConditions {
            sentences.append(ChangeSentence(subject: .condition(name), text: "removed"))
        }
        return sentences
    }

    func added(_ parameter: TemplateParameter) -> [ChangeSentence] {
        let subject = ChangeSentence.Subject.parameter(parameter.key)
        var sentences = [
            ChangeSentence(subject: subject, text: "added, \(Self.text(parameter.defaultValue)) for everyone else")
        ]
        for value in ordered(parameter.conditionalValues.map(\.conditionName)) {
            sentences.append(
                ChangeSentence(
                    subject: subject,
                    text: "for \(value), \(Self.text(parameter.conditionalValue(for: value)))"
                )
            )
        }
        return sentences
    }

    func changed(_ before: TemplateParameter, _ after: TemplateParameter) -> [ChangeSentence] {
        let subject = ChangeSentence.Subject.parameter(after.key)
        var texts: [String] = []
        if before.defaultValue != after.defaultValue {
            texts.append(
                "for everyone else, \(Self.text(after.defaultValue)) instead of \(Self.text(before.defaultValue))"
            )
        }
        let names = ordered(
            before.conditionalValues.map(\.conditionName) + after.conditionalValues.map(\.conditionName)
        )
        for name in names {
            let was = before.conditionalValue(for: name)
            let now = after.conditionalValue(for: name)
            if was != now { texts.append("for \(name), \(Self.text(now)) instead of \(Self.text(was))") }
        }
        if before.valueType != after.valueType {
            texts.append(
                "type \(after.valueType?.rawValue ?? "STRING") instead of \(before.valueType?.rawValue ?? "STRING")"
            )
        }
        if before.description != after.description {
            texts.append("description \(Self.quote(after.description)) instead of \(Self.quote(before.description))")
        }
        let was = before.metadata ?? ParameterMetadata()
        let now = after.metadata ?? ParameterMetadata()
        if was.title != now.title { texts.append("title \(Self.quote(now.title)) instead of \(Self.quote(was.title))") }
        if was.category != now.category {
            texts.append("category \(Self.quote(now.category)) instead of \(Self.quote(was.category))")
        }
        if was.allowedValues != now.allowedValues {
            let list = { (values: [String]) -> String in
                values.isEmpty ? "any" : values.map { Self.quote($0) }.joined(separator: ", ")
            }
            texts.append("allowed values \(list(now.allowedValues)) instead of \(list(was.allowedValues))")
        }
        if was.realtime != now.realtime { texts.append(now.realtime ? "realtime now" : "no longer realtime") }
        if texts.isEmpty { texts.append("other settings changed (see the whole definition)") }
        return texts.map { ChangeSentence(subject: subject, text: $0) }
    }

    func changed(
        _ before: TemplateCondition,
        at from: Int,
        _ after: TemplateCondition,
        at to: Int
    ) -> [ChangeSentence] {
        let subject = ChangeSentence.Subject.condition(after.name)
        var texts: [String] = []
        let oldExpression = Self.expression(before)
        let newExpression = Self.expression(after)
        if oldExpression != newExpression { texts.append("matches \(newExpression) instead of \(oldExpression)") }
        if from != to { texts.append("position \(to + 1) instead of \(from + 1)") }
        if before.tagColor != after.tagColor {
            texts.append("colour \(after.tagColor ?? "none") instead of \(before.tagColor ?? "none")")
        }
        if texts.isEmpty { texts.append(before == after ? "moved among the others" : "other settings changed") }
        return texts.map { ChangeSentence(subject: subject, text: $0) }
    }

    /// Condition names in the new template's order, then the old one's, each once.
    func ordered(_ names: [String]) -> [String] {
        let wanted = Set(names)
        var seen: Set<String> = []
        var result: [String] = []
        for name in new.conditions.map(\.name) + old.conditions.map(\.name) + names
        where wanted.contains(name) && seen.insert(name).inserted {
            result.append(name)
        }
        return result
    }

    /// A value in a sentence: `'text'` (JSON compacted, long text shortened), `none`, or what
    /// stands in for it.
    static func text(_ value: ParameterValue?) -> String {
        guard let value else { return "none" }
        switch value.kind {
        case .value(let string):
            // Only objects and arrays: `"42"` stays as written.
            if string.first == "{" || string.first == "[", let json = try? JSONValue.parse(string) {
                return quote(json.serialized(.compact))
            }
            return quote(string)
        case .useInAppDefault: return "the app's own default"
        case .managed(let kind): return "a Firebase-managed value (\(kind))"
        }
    }

    static func quote(_ text: String?) -> String {
        guard let text else { return "none" }
        let flat = String(text.map { $0 == "\n" ? " " : $0 })
        let shown =
            flat.count > maximumValueLength ? String(flat.prefix(maximumValueLength - 1)) + "…" : flat
        return "'\(shown)'"
    }

    static func expression(_ condition: TemplateCondition) -> String {
        switch condition.source {
        case .expression(let text): return text
        case .structured: return ParsedCondition(condition).expression?.expressionText ?? "(a structured condition)"
        }
    }
}
