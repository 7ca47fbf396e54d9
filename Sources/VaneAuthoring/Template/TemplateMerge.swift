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
/// The merge starts from `theirs` and applies every change `ours` made relative to `base`, field
/// by field:
/// - Parameters, keyed by ``TemplateParameter/key`` across ``ConfigTemplate/allParameters``:
///   their default value, their value for each condition, description, value type, metadata
///   (the `vane` member), the group they sit in and their unknown fields are each a field of its
///   own, so two sides that changed different fields of one parameter both keep their change.
/// - Conditions, keyed by ``TemplateCondition/name``: expression (or tree), colour and unknown
///   fields each; their order separately, because it decides which condition wins.
/// - The `vane` settings, unknown top-level fields, and parameter groups' descriptions and
///   unknown fields, field by field (unknown fields member by member).
///
/// Something is a conflict only when both sides changed the same field relative to `base` and
/// the results differ: the same change made on both sides merges. A parameter or condition
/// removed on one side and changed on the other is a conflict on its `"removed"` field; one added
/// on both sides merges field by field as if its base had none of them.
///
/// Conflicts can be settled by ``Resolution``s given per field
/// (``init(base:theirs:ours:resolving:)``): the field then takes the chosen side or value, and
/// ``settled`` lists what each choice made of it.
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
    /// One field of one subject: what a ``Resolution`` settles.
    public struct FieldKey: Sendable, Hashable {
        /// What the field belongs to.
        public var subject: Conflict.Subject
        /// The field's name, as in ``FieldConflict/field``.
        public var field: String

        /// Creates a field key.
        public init(subject: Conflict.Subject, field: String) {
            self.subject = subject
            self.field = field
        }
    }

    /// How to settle one conflicting field.
    public enum Resolution: Sendable, Hashable {
        /// The draft's side.
        case ours
        /// The side live now.
        case theirs
        /// A value of its own, as JSON: a string (or null) for `"description"`, `"valueType"`,
        /// `"tagColor"` and `"expression"`; for `"defaultValue"` and `"conditionalValues[…]"` a
        /// string (an explicit value), a parameter value object such as
        /// `{"useInAppDefault": true}`, or null (none); any JSON for a settings field. Other
        /// fields (`"removed"`, `"position"`, `"order"`, `"group"`, `"metadata"`,
        /// `"unknownFields"`, `"condition"`) take a side only.
        case value(JSONValue)
    }

    /// A conflicting field that a resolution settled.
    public struct SettledField: Sendable, Hashable {
        /// What the field belongs to.
        public var subject: Conflict.Subject
        /// The field's three sides, rendered as in ``FieldConflict``.
        public var conflict: FieldConflict
        /// The resolution that settled it.
        public var resolution: Resolution
        /// What the field became, rendered like the sides; nil when absent.
        public var result: String?

        /// Creates a settled field.
        public init(subject: Conflict.Subject, conflict: FieldConflict, resolution: Resolution, result: String?) {
            self.subject = subject
            self.conflict = conflict
            self.resolution = resolution
            self.result = result
        }

        /// Whether the result differs from the side live now, so settling it this way undoes
        /// (or overrides) what was published since the draft started.
        public var overridesTheirs: Bool { result != conflict.theirs }
    }

    /// A resolution that could not be used, and why.
    public struct RefusedResolution: Sendable, Hashable {
        /// The field it was given for.
        public var key: FieldKey
        /// Why it was refused: what the field takes.
        public var reason: String

        /// Creates a refused resolution.
        public init(key: FieldKey, reason: String) {
            self.key = key
            self.reason = reason
        }
    }

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
    /// What both sides changed differently and no resolution settled; empty when the merge
    /// succeeded.
    public var conflicts: [Conflict]
    /// The conflicting fields the resolutions settled, in the order of ``conflicts``.
    public var settled: [SettledField]
    /// Resolutions given for fields that did not conflict, in a stable order.
    public var unusedResolutions: [FieldKey]
    /// Resolutions whose value the field cannot take; their fields stay in ``conflicts``.
    public var refusedResolutions: [RefusedResolution]

    /// Merges the changes `ours` made since `base` into `theirs`.
    ///
    /// - Parameters:
    ///   - base: The version the draft started from.
    ///   - theirs: The version live now.
    ///   - ours: The draft.
    ///   - resolutions: How to settle conflicting fields; a field without one stays a conflict.
    public init(
        base: ConfigTemplate,
        theirs: ConfigTemplate,
        ours: ConfigTemplate,
        resolving resolutions: [FieldKey: Resolution] = [:]
    ) {
        var merger = Merger(base: base, theirs: theirs, ours: ours, resolutions: resolutions)
        let template = merger.run()
        conflicts = merger.groupedConflicts()
        settled = merger.settled
        refusedResolutions = merger.refused
        unusedResolutions = resolutions.keys.filter { !merger.used.contains($0) }
            .sorted { "\($0.subject)\u{0}\($0.field)" < "\($1.subject)\u{0}\($1.field)" }
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

/// A parameter or condition as compact JSON, for a `"removed"` conflict.
private func render(_ placement: Placement?) -> String? {
    placement.map { render(.object($0.parameter.json())) }
}

private func render(_ condition: TemplateCondition?) -> String? {
    condition.map { render(.object($0.json())) }
}

/// How one kind of field is shown and, when it can take a value of its own, read from JSON.
private struct FieldCodec<Value> {
    /// The value rendered as ``TemplateMerge/FieldConflict`` shows it.
    var text: (Value) -> String?
    /// What a value of its own must be, for the refusal; nil when the field takes a side only.
    var expected: String?
    /// The value a JSON resolution gives; nil when the JSON does not fit.
    var decode: (JSONValue) -> Value?

    /// A field that takes mine or theirs only.
    static func sideOnly(_ text: @escaping (Value) -> String?) -> FieldCodec {
        FieldCodec(text: text, expected: nil, decode: { _ in nil })
    }
}

extension FieldCodec where Value == ParameterValue? {
    static var parameterValue: FieldCodec {
        FieldCodec(
            text: { render($0) },
            expected: "a string, {\"value\": \"…\"}, {\"useInAppDefault\": true} or null",
            decode: { json in
                switch json {
                case .null: return .some(nil)
                case .string(let string): return .some(.value(string))
                case .object(let object):
                    let value = ParameterValue(json: object)
                    guard object.count == 1, value.stringValue != nil || value == .useInAppDefault else { return nil }
                    return .some(value)
                default: return nil
                }
            }
        )
    }
}

extension FieldCodec where Value == String? {
    static var optionalString: FieldCodec {
        FieldCodec(
            text: { $0 },
            expected: "a string or null",
            decode: { json in
                switch json {
                case .null: return .some(nil)
                case .string(let string): return .some(string)
                default: return nil
                }
            }
        )
    }
}

extension FieldCodec where Value == ParameterValueType? {
    static var valueType: FieldCodec {
        FieldCodec(
            text: { $0?.rawValue },
            expected: "a type name such as \"STRING\", or null",
            decode: { json in
                switch json {
                case .null: return .some(nil)
                case .string(let name): return .some(ParameterValueType(rawValue: name))
                default: return nil
                }
            }
        )
    }
}

extension FieldCodec where Value == TemplateCondition.Source? {
    static var source: FieldCodec {
        FieldCodec(
            text: { render($0) },
            expected: "an expression (a string) or a condition tree (an object)",
            decode: { json in
                switch json {
                case .string(let expression): return .some(.expression(expression))
                case .object: return .some(.structured(json))
                default: return nil
                }
            }
        )
    }
}

extension FieldCodec where Value == JSONValue? {
    static var json: FieldCodec {
        FieldCodec(
            text: { $0.map(render) },
            expected: "a JSON value, or null to leave the member out",
            decode: { $0 == .null ? .some(nil) : .some($0) }
        )
    }
}

extension FieldCodec where Value == Bool {
    static var bool: FieldCodec {
        FieldCodec(
            text: { String($0) },
            expected: "true or false",
            decode: { $0.boolValue }
        )
    }
}

/// Runs one merge, collecting conflicts and settling those a resolution is given for.
private struct Merger {
    typealias Subject = TemplateMerge.Conflict.Subject

    let baseTemplate: ConfigTemplate
    let theirsTemplate: ConfigTemplate
    let oursTemplate: ConfigTemplate
    let base: Side
    let theirs: Side
    let ours: Side
    let resolutions: [TemplateMerge.FieldKey: TemplateMerge.Resolution]
    /// Unsettled conflicting fields, in the order found.
    var pending: [(subject: Subject, field: TemplateMerge.FieldConflict)] = []
    var settled: [TemplateMerge.SettledField] = []
    var refused: [TemplateMerge.RefusedResolution] = []
    var used: Set<TemplateMerge.FieldKey> = []

    init(
        base: ConfigTemplate,
        theirs: ConfigTemplate,
        ours: ConfigTemplate,
        resolutions: [TemplateMerge.FieldKey: TemplateMerge.Resolution]
    ) {
        baseTemplate = base
        theirsTemplate = theirs
        oursTemplate = ours
        self.base = Side(base)
        self.theirs = Side(theirs)
        self.ours = Side(ours)
        self.resolutions = resolutions
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
        return ConfigTemplate(
            conditions: conditions,
            parameters: parameters,
            parameterGroups: groups,
            version: theirsTemplate.version,
            settings: settings,
            unknownFields: unknown
        )
    }

    /// The unsettled fields, one conflict per subject, subjects in the order first found.
    func groupedConflicts() -> [TemplateMerge.Conflict] {
        var subjects: [Subject] = []
        var fields: [Subject: [TemplateMerge.FieldConflict]] = [:]
        for (subject, field) in pending {
            if fields[subject] == nil { subjects.append(subject) }
            fields[subject, default: []].append(field)
        }
        return subjects.map { TemplateMerge.Conflict(subject: $0, fields: fields[$0] ?? []) }
    }

    // MARK: Fields

    /// One field merged three ways; a conflict is settled by its resolution or recorded.
    mutating func field<Value: Equatable>(
        _ subject: Subject,
        _ name: String,
        _ base: Value,
        _ theirs: Value,
        _ ours: Value,
        _ codec: FieldCodec<Value>
    ) -> Value {
        switch threeWay(base, theirs, ours) {
        case .resolved(let value):
            return value
        case .conflict:
            let conflict = TemplateMerge.FieldConflict(
                field: name,
                base: codec.text(base),
                theirs: codec.text(theirs),
                ours: codec.text(ours)
            )
            return settle(subject, conflict, theirs: theirs, ours: ours, codec)
        }
    }

    /// The value a conflicting field takes: its resolution's, or theirs while it stays a conflict.
    mutating func settle<Value>(
        _ subject: Subject,
        _ conflict: TemplateMerge.FieldConflict,
        theirs: Value,
        ours: Value,
        _ codec: FieldCodec<Value>
    ) -> Value {
        let key = TemplateMerge.FieldKey(subject: subject, field: conflict.field)
        guard let resolution = resolutions[key] else {
            pending.append((subject, conflict))
            return theirs
        }
        used.insert(key)
        let value: Value
        switch resolution {
        case .theirs:
            value = theirs
        case .ours:
            value = ours
        case .value(let json):
            // A side-only field decodes nothing, so its refusal says it takes a side.
            guard let decoded = codec.decode(json) else {
                let takes = codec.expected.map { "takes \($0), found \(json.kindDescription)" }
                refused.append(
                    TemplateMerge.RefusedResolution(
                        key: key,
                        reason: "\(conflict.field) \(takes ?? "takes mine or theirs, not a value of its own")"
                    )
                )
                pending.append((subject, conflict))
                return theirs
            }
            value = decoded
        }
        settled.append(
            TemplateMerge.SettledField(
                subject: subject,
                conflict: conflict,
                resolution: resolution,
                result: codec.text(value)
            )
        )
        return value
    }

    /// Something removed on one side and changed on the other: a `"removed"` conflict, settled
    /// by taking one side whole.
    mutating func settleRemoval<Value>(
        _ subject: Subject,
        base: Value?,
        theirs: Value?,
        ours: Value?,
        _ text: @escaping (Value?) -> String?
    ) -> Value? {
        let conflict = TemplateMerge.FieldConflict(
            field: "removed",
            base: text(base),
            theirs: text(theirs),
            ours: text(ours)
        )
        return settle(subject, conflict, theirs: theirs, ours: ours, .sideOnly(text))
    }

    /// Merges two sides' changes to a JSON object member by member, naming fields by `path`.
    mutating func mergeObject(base: JSONObject, theirs: JSONObject, ours: JSONObject, at path: JSONPath) -> JSONObject {
        if case .resolved(let object) = threeWay(base, theirs, ours) { return object }
        var values: [String: JSONValue] = [:]
        for key in union(theirs.keys, ours.keys, base.keys) {
            values[key] = field(.settings, path.appending(key).description, base[key], theirs[key], ours[key], .json)
        }
        let order = mergeOrder(base: base.keys, theirs: theirs.keys, ours: ours.keys) { values[$0] != nil }
        var object = JSONObject()
        for key in order.order { object[key] = values[key] }
        return object
    }

    // MARK: Conditions

    mutating func mergeConditions() -> [TemplateCondition] {
        var merged: [String: TemplateCondition] = [:]
        let names = union(theirs.conditionNames, ours.conditionNames, base.conditionNames)
        // A condition both sides added must also sit in the same place among the conditions both have.
        let shared = Set(theirs.conditionNames).intersection(ours.conditionNames)
        var placedAsOurs: [String] = []
        for name in names {
            let (old, live, draft) = (base.conditions[name], theirs.conditions[name], ours.conditions[name])
            switch threeWay(old, live, draft) {
            case .resolved(let condition):
                merged[name] = condition
            case .conflict:
                if let live, let draft {
                    merged[name] = mergeCondition(name, base: old, theirs: live, ours: draft)
                } else {
                    merged[name] = settleRemoval(.condition(name), base: old, theirs: live, ours: draft, render)
                }
            }
            if old == nil && shared.contains(name) {
                let live = Self.position(of: name, in: theirs.conditionNames, among: shared)
                let draft = Self.position(of: name, in: ours.conditionNames, among: shared)
                if live != draft {
                    let conflict = TemplateMerge.FieldConflict(field: "position", base: nil, theirs: live, ours: draft)
                    if settle(.condition(name), conflict, theirs: live, ours: draft, .sideOnly { $0 }) == draft {
                        placedAsOurs.append(name)
                    }
                }
            }
        }
        let order = mergeOrder(
            base: base.conditionNames,
            theirs: theirs.conditionNames,
            ours: ours.conditionNames
        ) { merged[$0] != nil }
        var result = order.order
        if order.conflict {
            let conflict = TemplateMerge.FieldConflict(
                field: "order",
                base: order.base.joined(separator: ", "),
                theirs: order.theirs.joined(separator: ", "),
                ours: order.ours.joined(separator: ", ")
            )
            let chosen = settle(
                .conditionOrder,
                conflict,
                theirs: order.theirs,
                ours: order.ours,
                .sideOnly { $0.joined(separator: ", ") }
            )
            // Ours' order of the conditions all three have, in the places they have in theirs.
            let common = Set(chosen)
            var next = chosen.makeIterator()
            for index in result.indices where common.contains(result[index]) {
                if let name = next.next() { result[index] = name }
            }
        }
        for name in placedAsOurs {
            result.removeAll { $0 == name }
            let before = ours.conditionNames.prefix { $0 != name }.last(where: shared.contains)
            let position =
                before.flatMap { result.firstIndex(of: $0) }.map { $0 + 1 }
                ?? result.firstIndex(where: shared.contains) ?? 0
            result.insert(name, at: position)
        }
        return result.compactMap { merged[$0] }
    }

    /// `"after <name>"` or `"first"`, counting only the names in `shared`.
    static func position(of name: String, in names: [String], among shared: Set<String>) -> String {
        let before = names.prefix { $0 != name }.last(where: shared.contains)
        return before.map { "after \($0)" } ?? "first"
    }

    /// A condition both sides have, merged field by field (`base` is nil when both added it).
    mutating func mergeCondition(
        _ name: String,
        base: TemplateCondition?,
        theirs: TemplateCondition,
        ours: TemplateCondition
    ) -> TemplateCondition {
        let subject = Subject.condition(name)
        let structured = [base?.source, theirs.source, ours.source].contains {
            if case .structured? = $0 { return true }
            return false
        }
        var result = theirs
        result.source =
            field(subject, structured ? "condition" : "expression", base?.source, theirs.source, ours.source, .source)
            ?? theirs.source
        result.tagColor = field(subject, "tagColor", base?.tagColor, theirs.tagColor, ours.tagColor, .optionalString)
        result.unknownFields = field(
            subject,
            "unknownFields",
            base?.unknownFields ?? JSONObject(),
            theirs.unknownFields,
            ours.unknownFields,
            .sideOnly { render($0) }
        )
        return result
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
                if let live, let draft {
                    merged[key] = mergeParameter(key, base: old, theirs: live, ours: draft)
                } else {
                    merged[key] = settleRemoval(.parameter(key), base: old, theirs: live, ours: draft, render)
                }
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

    /// A parameter both sides have, merged field by field (`base` is nil when both added it).
    /// Conditional values merge per condition; their order does not matter, so it never conflicts.
    mutating func mergeParameter(_ key: String, base: Placement?, theirs: Placement, ours: Placement) -> Placement {
        let subject = Subject.parameter(key)
        let old = base?.parameter
        let (live, draft) = (theirs.parameter, ours.parameter)
        var result = live
        result.defaultValue = field(
            subject,
            "defaultValue",
            old?.defaultValue,
            live.defaultValue,
            draft.defaultValue,
            .parameterValue
        )
        let oldNames = old?.conditionalValues.map(\.conditionName) ?? []
        let liveNames = live.conditionalValues.map(\.conditionName)
        let draftNames = draft.conditionalValues.map(\.conditionName)
        var values: [String: ParameterValue] = [:]
        for name in union(liveNames, draftNames, oldNames) {
            values[name] = field(
                subject,
                "conditionalValues[\(name)]",
                old?.conditionalValue(for: name),
                live.conditionalValue(for: name),
                draft.conditionalValue(for: name),
                .parameterValue
            )
        }
        result.conditionalValues = mergeOrder(base: oldNames, theirs: liveNames, ours: draftNames) {
            values[$0] != nil
        }
        .order.compactMap { name in values[name].map { ConditionalValue(conditionName: name, value: $0) } }
        result.description = field(
            subject,
            "description",
            old?.description,
            live.description,
            draft.description,
            .optionalString
        )
        result.valueType = field(subject, "valueType", old?.valueType, live.valueType, draft.valueType, .valueType)
        result.metadata = field(
            subject,
            "metadata",
            old?.metadata,
            live.metadata,
            draft.metadata,
            .sideOnly { $0.map { render(.object($0.json())) } }
        )
        let group = field(subject, "group", base?.group, theirs.group, ours.group, .sideOnly { $0 })
        result.unknownFields = field(
            subject,
            "unknownFields",
            old?.unknownFields ?? JSONObject(),
            live.unknownFields,
            draft.unknownFields,
            .sideOnly { render($0) }
        )
        return Placement(parameter: result, group: group)
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
        merged.description = field(
            .settings,
            path.appending("description").description,
            base?.description,
            merged.description,
            ours.description,
            .optionalString
        )
        merged.unknownFields = mergeObject(
            base: base?.unknownFields ?? JSONObject(),
            theirs: merged.unknownFields,
            ours: ours.unknownFields,
            at: path
        )
        return merged
    }

    // MARK: Settings

    mutating func mergeSettings() -> TemplateSettings {
        let (old, live, draft) = (baseTemplate.settings, theirsTemplate.settings, oursTemplate.settings)
        if case .resolved(let settings) = threeWay(old, live, draft) { return settings }
        let path = JSONPath.root.appending("vane")
        var merged = live
        for (name, flag) in [
            ("clientsMayPinDateTime", \TemplateSettings.clientsMayPinDateTime),
            ("clientsReceiveDescriptions", \TemplateSettings.clientsReceiveDescriptions),
        ] {
            merged[keyPath: flag] = field(
                .settings,
                path.appending(name).description,
                old[keyPath: flag],
                live[keyPath: flag],
                draft[keyPath: flag],
                .bool
            )
        }
        merged.unknownFields = mergeObject(
            base: old.unknownFields,
            theirs: live.unknownFields,
            ours: draft.unknownFields,
            at: path
        )
        return merged
    }
}
