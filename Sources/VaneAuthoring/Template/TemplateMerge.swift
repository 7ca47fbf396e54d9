public import VaneCore

/// A three-way merge of templates: the changes a draft made since it was started, applied to
/// what is live now.
///
/// The web console uses it when someone published between the moment a person started a draft
/// and the moment they publish it. `base` is the version the draft started from, `theirs` the
/// version live now, and `ours` the draft:
///
/// ```swift
/// let merge = TemplateMerge(base: started, theirs: live, ours: draft)
/// if let merged = merge.merged {
///     // publish merged; check it with validate() first, like any template
/// } else {
///     // show merge.conflicts, field by field
/// }
/// ```
///
/// The merge starts from `theirs` and applies every change `ours` made relative to `base`:
/// - Parameters, keyed by ``TemplateParameter/key`` across ``ConfigTemplate/allParameters``, are
///   merged whole: a parameter's values, description, type, metadata and the group it sits in
///   together are one unit.
/// - Conditions, keyed by ``TemplateCondition/name``, are merged whole (expression or tree,
///   colour, unknown fields); their order separately, because it decides which condition wins.
/// - The `vane` settings, unknown top-level fields, and parameter groups' descriptions and
///   unknown fields are merged field by field (unknown fields member by member).
///
/// Something is a conflict only when both sides changed it relative to `base` and the results
/// differ: the same change made on both sides merges. Removed on one side and changed on the
/// other is a conflict, and so is the same key added on both sides with different definitions.
///
/// The rest of the rules:
/// - Condition order: `theirs`' order, unless `ours` changed the relative order of the
///   conditions present in all three; both changing it differently is a
///   ``Conflict/Subject/conditionOrder`` conflict. A condition only `ours` added is placed after
///   the condition that precedes it in `ours` (first, when none does), and after any conditions
///   `theirs` added right there: `theirs`' order, then `ours`' additions. A condition both sides
///   added, identically but at different places, is a conflict on its `"position"`.
/// - Parameter and group order: the same rules, except that order only changes how the template
///   reads, so when both sides reordered differently `theirs`' order is kept without a conflict.
/// - A parameter group exists in the result when the merge of its existence says so, or when a
///   merged parameter sits in it.
/// - ``ConfigTemplate/version`` is `theirs`' version.
/// - The result is not validated: a parameter of `ours` may name a condition `theirs` removed.
///   ``ConfigTemplate/validate(options:)`` reports it.
/// - A key, condition name or group name that occurs twice (which validation refuses) is merged
///   by its first occurrence; the later ones are left out of the result.
///
/// The result is deterministic: the same three templates always merge to the same template and
/// the same conflicts, listed conditions first, then condition order, parameters and settings.
/// Merging with `theirs == base` gives exactly `ours`, and with `ours == base` exactly `theirs`.
public struct TemplateMerge: Sendable, Hashable {
    /// Something both sides changed differently, with the fields they disagree on.
    public struct Conflict: Sendable, Hashable {
        /// What the two sides disagree about.
        public enum Subject: Sendable, Hashable {
            /// The parameter with this key.
            ///
            /// Fields: `"defaultValue"`, `"conditionalValues[name]"` for each condition name,
            /// `"description"`, `"valueType"`, `"metadata"` (the `vane` member as JSON), `"group"`
            /// (the group's name; nil when ungrouped) and `"unknownFields"`; or `"removed"` alone
            /// when one side removed it, with each side's whole parameter as JSON.
            case parameter(String)
            /// The condition with this name.
            ///
            /// Fields: `"expression"` (or `"condition"` when a side has a server-template tree,
            /// as JSON), `"tagColor"`, `"unknownFields"` and `"position"` (for a condition both
            /// sides added, `"after <name>"` or `"first"` among the conditions both have); or
            /// `"removed"` alone when one side removed it, with each side's condition as JSON.
            case condition(String)
            /// The order of the conditions, which both sides changed differently.
            ///
            /// One field, `"order"`: the conditions present in all three templates, in each
            /// template's order, separated by `", "`.
            case conditionOrder
            /// The template's own fields: its `vane` settings, its unknown top-level fields, and
            /// its parameter groups' descriptions and unknown fields.
            ///
            /// Fields are named by their JSON path: `"vane.clientsMayPinDateTime"`,
            /// `"vane.someFutureSetting"`, `"someTopLevelField"`,
            /// `"parameterGroups.Checkout.description"`. Values are JSON.
            case settings
        }

        /// What the two sides disagree about.
        public var subject: Subject
        /// The fields that differ between `theirs` and `ours`, in a stable order.
        public var fields: [FieldConflict]

        /// Creates a conflict.
        public init(subject: Subject, fields: [FieldConflict]) {
            self.subject = subject
            self.fields = fields
        }
    }

    /// One field of a conflict, with a short human-readable rendering of its value on each side.
    ///
    /// A rendering is nil when the field is absent on that side (or, for the `"removed"` field,
    /// the whole parameter or condition is). Explicit parameter values render as JSON string
    /// literals (`"on"`), "use the app's default" as `in-app default`, managed values and
    /// metadata as compact JSON; expressions, descriptions, types and colours as written.
    public struct FieldConflict: Sendable, Hashable {
        /// The field's name, such as `"defaultValue"` or `"conditionalValues[beta]"`.
        public var field: String
        /// The field in the version the draft started from.
        public var base: String?
        /// The field in the version live now.
        public var theirs: String?
        /// The field in the draft.
        public var ours: String?

        /// Creates a field conflict.
        public init(field: String, base: String?, theirs: String?, ours: String?) {
            self.field = field
            self.base = base
            self.theirs = theirs
            self.ours = ours
        }
    }

    /// The merged template; nil when there are conflicts.
    public var merged: ConfigTemplate?
    /// What both sides changed differently; empty when the merge succeeded.
    public var conflicts: [Conflict]

    /// Merges the changes `ours` made since `base` into `theirs`.
    ///
    /// - Parameters:
    ///   - base: The version the draft started from.
    ///   - theirs: The version live now.
    ///   - ours: The draft.
    public init(base: ConfigTemplate, theirs: ConfigTemplate, ours: ConfigTemplate) {
        var merger = Merger(base: base, theirs: theirs, ours: ours)
        let template = merger.run()
        conflicts = merger.conflicts
        merged = conflicts.isEmpty ? template : nil
    }
}

// MARK: - The merge

/// The outcome of merging one value three ways.
private enum ThreeWay<Value: Equatable> {
    case resolved(Value)
    case conflict
}

/// Takes `theirs` unless only `ours` changed the value; a conflict when both changed it differently.
private func threeWay<Value: Equatable>(_ base: Value, _ theirs: Value, _ ours: Value) -> ThreeWay<Value> {
    if ours == base || ours == theirs { return .resolved(theirs) }
    if theirs == base { return .resolved(ours) }
    return .conflict
}

/// Where a parameter sits: its definition and its group (nil outside any group).
private struct Placement: Hashable {
    var parameter: TemplateParameter
    var group: String?
}

/// A group's own fields, without its parameters.
private struct GroupFields: Hashable {
    var description: String?
    var unknownFields: JSONObject

    init(_ group: ParameterGroup) {
        description = group.description
        unknownFields = group.unknownFields
    }
}

/// One template, indexed by key and name; first occurrences only.
private struct Side {
    var placements: [String: Placement] = [:]
    /// Keys in document order, for each group (nil: the ungrouped parameters).
    var keysByGroup: [String?: [String]] = [:]
    var keys: [String] = []
    var conditions: [String: TemplateCondition] = [:]
    var conditionNames: [String] = []
    var groups: [String: GroupFields] = [:]
    var groupNames: [String] = []

    init(_ template: ConfigTemplate) {
        for group in template.parameterGroups where groups[group.name] == nil {
            groups[group.name] = GroupFields(group)
            groupNames.append(group.name)
        }
        var seenGroups: Set<String> = []
        add(template.parameters, group: nil)
        for group in template.parameterGroups where seenGroups.insert(group.name).inserted {
            add(group.parameters, group: group.name)
        }
        for condition in template.conditions where conditions[condition.name] == nil {
            conditions[condition.name] = condition
            conditionNames.append(condition.name)
        }
    }

    private mutating func add(_ parameters: [TemplateParameter], group: String?) {
        for parameter in parameters where placements[parameter.key] == nil {
            placements[parameter.key] = Placement(parameter: parameter, group: group)
            keysByGroup[group, default: []].append(parameter.key)
            keys.append(parameter.key)
        }
    }
}

/// The names of `lists`, each once, in the order they first appear.
private func union<Name: Hashable>(_ lists: [Name]...) -> [Name] {
    var seen: Set<Name> = []
    return lists.joined().filter { seen.insert($0).inserted }
}

/// An order merged three ways.
private struct MergedOrder<Name: Hashable> {
    /// The names kept, in their merged order.
    var order: [Name]
    /// Whether both sides changed the relative order of the names present in all three, differently.
    var conflict: Bool
    /// The names present in all three lists, in each list's order.
    var base: [Name]
    var theirs: [Name]
    var ours: [Name]
}

/// Merges three orders of names. Starts from `theirs`; when only `ours` changed the relative order
/// of the names present in all three, those take `ours`' order in the places they have in `theirs`.
/// Names `kept` rejects are dropped; kept names missing from `theirs` are placed after the name
/// that precedes them in `ours` (first when none does) and after the names only `theirs` has that
/// follow it.
private func mergeOrder<Name: Hashable>(
    base: [Name],
    theirs: [Name],
    ours: [Name],
    keeping kept: (Name) -> Bool
) -> MergedOrder<Name> {
    let base = union(base)
    let theirs = union(theirs)
    let ours = union(ours)
    let common = Set(base).intersection(theirs).intersection(ours)
    let baseCommon = base.filter(common.contains)
    let theirsCommon = theirs.filter(common.contains)
    let oursCommon = ours.filter(common.contains)
    let oursReordered = oursCommon != baseCommon
    let theirsReordered = theirsCommon != baseCommon
    var order = theirs
    if oursReordered && !theirsReordered {
        var next = oursCommon.makeIterator()
        for index in order.indices where common.contains(order[index]) {
            if let name = next.next() { order[index] = name }
        }
    }
    order = order.filter(kept)
    var placed = Set(order)
    let inOurs = Set(ours)
    for (index, name) in ours.enumerated() where kept(name) && !placed.contains(name) {
        let predecessor = ours[..<index].last(where: placed.contains)
        var position = predecessor.flatMap { order.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
        // Theirs' own additions at that place come first: theirs' order, then ours' additions.
        while position < order.count && !inOurs.contains(order[position]) { position += 1 }
        order.insert(name, at: position)
        placed.insert(name)
    }
    return MergedOrder(
        order: order,
        conflict: oursReordered && theirsReordered && oursCommon != theirsCommon,
        base: baseCommon,
        theirs: theirsCommon,
        ours: oursCommon
    )
}

/// Compact JSON text.
private func render(_ value: JSONValue) -> String {
    value.serialized(.compact)
}

/// A parameter value: `"on"`, `in-app default`, or its JSON.
private func render(_ value: ParameterValue?) -> String? {
    guard let value else { return nil }
    if value.json.count == 1, let string = value.stringValue { return render(.string(string)) }
    if value == .useInAppDefault { return "in-app default" }
    return render(.object(value.json))
}

/// An object's JSON; nil when it is empty.
private func render(_ object: JSONObject?) -> String? {
    guard let object, !object.isEmpty else { return nil }
    return render(.object(object))
}

/// A condition's expression as written, or its tree as JSON.
private func render(_ source: TemplateCondition.Source?) -> String? {
    switch source {
    case .expression(let expression)?: return expression
    case .structured(let tree)?: return render(tree)
    case nil: return nil
    }
}

/// Merges two sides' changes to a JSON object member by member, naming conflicts by `path`.
private func mergeObject(
    base: JSONObject,
    theirs: JSONObject,
    ours: JSONObject,
    at path: JSONPath
) -> (object: JSONObject, conflicts: [TemplateMerge.FieldConflict]) {
    if case .resolved(let object) = threeWay(base, theirs, ours) { return (object, []) }
    var values: [String: JSONValue] = [:]
    var conflicts: [TemplateMerge.FieldConflict] = []
    for key in union(theirs.keys, ours.keys, base.keys) {
        switch threeWay(base[key], theirs[key], ours[key]) {
        case .resolved(let value):
            values[key] = value
        case .conflict:
            conflicts.append(
                TemplateMerge.FieldConflict(
                    field: path.appending(key).description,
                    base: base[key].map(render),
                    theirs: theirs[key].map(render),
                    ours: ours[key].map(render)
                )
            )
            values[key] = theirs[key]
        }
    }
    let order = mergeOrder(base: base.keys, theirs: theirs.keys, ours: ours.keys) { values[$0] != nil }
    var object = JSONObject()
    for key in order.order { object[key] = values[key] }
    return (object, conflicts)
}

/// Runs one merge, collecting conflicts.
private struct Merger {
    let baseTemplate: ConfigTemplate
    let theirsTemplate: ConfigTemplate
    let oursTemplate: ConfigTemplate
    let base: Side
    let theirs: Side
    let ours: Side
    var conflicts: [TemplateMerge.Conflict] = []
    var settingsConflicts: [TemplateMerge.FieldConflict] = []

    init(base: ConfigTemplate, theirs: ConfigTemplate, ours: ConfigTemplate) {
        baseTemplate = base
        theirsTemplate = theirs
        oursTemplate = ours
        self.base = Side(base)
        self.theirs = Side(theirs)
        self.ours = Side(ours)
    }

    mutating func run() -> ConfigTemplate {
        let conditions = mergeConditions()
        let (parameters, groups) = mergeParameters()
        let settings = mergeSettings()
        let unknown = mergeObject(
            base: baseTemplate.unknownFields,
            theirs: theirsTemplate.unknownFields,
            ours: oursTemplate.unknownFields,
            at: .root
        )
        settingsConflicts += unknown.conflicts
        if !settingsConflicts.isEmpty {
            conflicts.append(TemplateMerge.Conflict(subject: .settings, fields: settingsConflicts))
        }
        return ConfigTemplate(
            conditions: conditions,
            parameters: parameters,
            parameterGroups: groups,
            version: theirsTemplate.version,
            settings: settings,
            unknownFields: unknown.object
        )
    }

    // MARK: Conditions

    mutating func mergeConditions() -> [TemplateCondition] {
        var merged: [String: TemplateCondition] = [:]
        var fieldsByName: [String: [TemplateMerge.FieldConflict]] = [:]
        let names = union(theirs.conditionNames, ours.conditionNames, base.conditionNames)
        for name in names {
            let (old, live, draft) = (base.conditions[name], theirs.conditions[name], ours.conditions[name])
            switch threeWay(old, live, draft) {
            case .resolved(let condition):
                merged[name] = condition
            case .conflict:
                merged[name] = live
                fieldsByName[name] = Self.conditionFields(base: old, theirs: live, ours: draft)
            }
        }
        // A condition both sides added must also sit in the same place among the conditions both have.
        let shared = Set(theirs.conditionNames).intersection(ours.conditionNames)
        for name in names where base.conditions[name] == nil && shared.contains(name) {
            let live = Self.position(of: name, in: theirs.conditionNames, among: shared)
            let draft = Self.position(of: name, in: ours.conditionNames, among: shared)
            if live != draft {
                fieldsByName[name, default: []]
                    .append(TemplateMerge.FieldConflict(field: "position", base: nil, theirs: live, ours: draft))
            }
        }
        for name in names {
            if let fields = fieldsByName[name] {
                conflicts.append(TemplateMerge.Conflict(subject: .condition(name), fields: fields))
            }
        }
        let order = mergeOrder(
            base: base.conditionNames,
            theirs: theirs.conditionNames,
            ours: ours.conditionNames
        ) { merged[$0] != nil }
        if order.conflict {
            let field = TemplateMerge.FieldConflict(
                field: "order",
                base: order.base.joined(separator: ", "),
                theirs: order.theirs.joined(separator: ", "),
                ours: order.ours.joined(separator: ", ")
            )
            conflicts.append(TemplateMerge.Conflict(subject: .conditionOrder, fields: [field]))
        }
        return order.order.compactMap { merged[$0] }
    }

    /// `"after <name>"` or `"first"`, counting only the names in `shared`.
    static func position(of name: String, in names: [String], among shared: Set<String>) -> String {
        let before = names.prefix { $0 != name }.last(where: shared.contains)
        return before.map { "after \($0)" } ?? "first"
    }

    static func conditionFields(
        base: TemplateCondition?,
        theirs: TemplateCondition?,
        ours: TemplateCondition?
    ) -> [TemplateMerge.FieldConflict] {
        guard let theirs, let ours else {
            return [
                TemplateMerge.FieldConflict(
                    field: "removed",
                    base: base.map { render(.object($0.json())) },
                    theirs: theirs.map { render(.object($0.json())) },
                    ours: ours.map { render(.object($0.json())) }
                )
            ]
        }
        var fields: [TemplateMerge.FieldConflict] = []
        if theirs.source != ours.source {
            let sources = [base?.source, theirs.source, ours.source]
            let structured = sources.contains {
                if case .structured? = $0 { return true }
                return false
            }
            fields.append(
                TemplateMerge.FieldConflict(
                    field: structured ? "condition" : "expression",
                    base: render(base?.source),
                    theirs: render(theirs.source),
                    ours: render(ours.source)
                )
            )
        }
        if theirs.tagColor != ours.tagColor {
            fields.append(
                TemplateMerge.FieldConflict(
                    field: "tagColor",
                    base: base?.tagColor,
                    theirs: theirs.tagColor,
                    ours: ours.tagColor
                )
            )
        }
        if theirs.unknownFields != ours.unknownFields {
            fields.append(
                TemplateMerge.FieldConflict(
                    field: "unknownFields",
                    base: render(base?.unknownFields),
                    theirs: render(theirs.unknownFields),
                    ours: render(ours.unknownFields)
                )
            )
        }
        return fields
    }

    // MARK: Parameters and groups

    mutating func mergeParameters() -> (parameters: [TemplateParameter], groups: [ParameterGroup]) {
        var merged: [String: Placement] = [:]
        for key in union(theirs.keys, ours.keys, base.keys) {
            let (old, live, draft) = (base.placements[key], theirs.placements[key], ours.placements[key])
            switch threeWay(old, live, draft) {
            case .resolved(let placement):
                merged[key] = placement
            case .conflict:
                let fields = Self.parameterFields(base: old, theirs: live, ours: draft)
                // Definitions that differ only in the order of their conditional values are the same.
                if !fields.isEmpty {
                    conflicts.append(TemplateMerge.Conflict(subject: .parameter(key), fields: fields))
                }
                merged[key] = live
            }
        }
        var occupied: Set<String> = []
        for placement in merged.values {
            if let group = placement.group { occupied.insert(group) }
        }
        var groupFields: [String: GroupFields] = [:]
        for name in union(theirs.groupNames, ours.groupNames, base.groupNames) {
            let (old, live, draft) = (base.groups[name], theirs.groups[name], ours.groups[name])
            // Whether the group exists merges like any value; for a Bool it cannot conflict.
            let exists = (draft != nil) == (old != nil) ? live != nil : draft != nil
            guard exists || occupied.contains(name) else { continue }
            groupFields[name] = mergeGroupFields(name: name, base: old, theirs: live, ours: draft)
        }
        func parameters(in group: String?) -> [TemplateParameter] {
            mergeOrder(
                base: base.keysByGroup[group] ?? [],
                theirs: theirs.keysByGroup[group] ?? [],
                ours: ours.keysByGroup[group] ?? []
            ) { merged[$0]?.group == group }
            .order.compactMap { merged[$0]?.parameter }
        }
        let groupOrder = mergeOrder(base: base.groupNames, theirs: theirs.groupNames, ours: ours.groupNames) {
            groupFields[$0] != nil
        }
        let groups = groupOrder.order.compactMap { name in
            groupFields[name].map {
                ParameterGroup(
                    name: name,
                    description: $0.description,
                    parameters: parameters(in: name),
                    unknownFields: $0.unknownFields
                )
            }
        }
        return (parameters(in: nil), groups)
    }

    /// A group's description and unknown fields, merged; a side that removed the group changes nothing.
    mutating func mergeGroupFields(
        name: String,
        base: GroupFields?,
        theirs: GroupFields?,
        ours: GroupFields?
    ) -> GroupFields? {
        if case .resolved(let fields) = threeWay(base, theirs, ours) { return fields ?? theirs ?? ours ?? base }
        guard var merged = theirs, let ours else { return theirs ?? ours }
        let path = JSONPath.root.appending("parameterGroups").appending(name)
        switch threeWay(base?.description, merged.description, ours.description) {
        case .resolved(let description):
            merged.description = description
        case .conflict:
            settingsConflicts.append(
                TemplateMerge.FieldConflict(
                    field: path.appending("description").description,
                    base: base?.description,
                    theirs: merged.description,
                    ours: ours.description
                )
            )
        }
        let unknown = mergeObject(
            base: base?.unknownFields ?? JSONObject(),
            theirs: merged.unknownFields,
            ours: ours.unknownFields,
            at: path
        )
        merged.unknownFields = unknown.object
        settingsConflicts += unknown.conflicts
        return merged
    }

    static func parameterFields(
        base: Placement?,
        theirs: Placement?,
        ours: Placement?
    ) -> [TemplateMerge.FieldConflict] {
        guard let theirs, let ours else {
            return [
                TemplateMerge.FieldConflict(
                    field: "removed",
                    base: base.map { render(.object($0.parameter.json())) },
                    theirs: theirs.map { render(.object($0.parameter.json())) },
                    ours: ours.map { render(.object($0.parameter.json())) }
                )
            ]
        }
        let old = base?.parameter
        let (live, draft) = (theirs.parameter, ours.parameter)
        var fields: [TemplateMerge.FieldConflict] = []
        func compare(_ field: String, _ value: (TemplateParameter?) -> String?) {
            let (liveValue, draftValue) = (value(live), value(draft))
            if liveValue != draftValue {
                fields.append(
                    TemplateMerge.FieldConflict(field: field, base: value(old), theirs: liveValue, ours: draftValue)
                )
            }
        }
        compare("defaultValue") { render($0?.defaultValue) }
        let conditionNames = union(
            live.conditionalValues.map(\.conditionName),
            draft.conditionalValues.map(\.conditionName)
        )
        for name in conditionNames {
            compare("conditionalValues[\(name)]") { render($0?.conditionalValue(for: name)) }
        }
        compare("description") { $0?.description }
        compare("valueType") { $0?.valueType?.rawValue }
        compare("metadata") { $0?.metadata.map { render(.object($0.json())) } }
        if theirs.group != ours.group {
            fields.append(
                TemplateMerge.FieldConflict(field: "group", base: base?.group, theirs: theirs.group, ours: ours.group)
            )
        }
        compare("unknownFields") { render($0?.unknownFields) }
        return fields
    }

    // MARK: Settings

    mutating func mergeSettings() -> TemplateSettings {
        let (old, live, draft) = (baseTemplate.settings, theirsTemplate.settings, oursTemplate.settings)
        if case .resolved(let settings) = threeWay(old, live, draft) { return settings }
        let path = JSONPath.root.appending("vane")
        var merged = live
        func mergeFlag(_ name: String, _ flag: WritableKeyPath<TemplateSettings, Bool>) -> [TemplateMerge.FieldConflict]
        {
            switch threeWay(old[keyPath: flag], live[keyPath: flag], draft[keyPath: flag]) {
            case .resolved(let value):
                merged[keyPath: flag] = value
                return []
            case .conflict:
                return [
                    TemplateMerge.FieldConflict(
                        field: path.appending(name).description,
                        base: String(old[keyPath: flag]),
                        theirs: String(live[keyPath: flag]),
                        ours: String(draft[keyPath: flag])
                    )
                ]
            }
        }
        settingsConflicts += mergeFlag("clientsMayPinDateTime", \.clientsMayPinDateTime)
        settingsConflicts += mergeFlag("clientsReceiveDescriptions", \.clientsReceiveDescriptions)
        let unknown = mergeObject(
            base: old.unknownFields,
            theirs: live.unknownFields,
            ours: draft.unknownFields,
            at: path
        )
        merged.unknownFields = unknown.object
        settingsConflicts += unknown.conflicts
        return merged
    }
}
