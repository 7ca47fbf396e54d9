import Foundation
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// Editing one flag in the person's draft: its values in the template's condition order, its
/// type, and what people and debug menus read about it. Nothing goes live until the draft is
/// reviewed and published.
extension FlagsController {

    struct FlagEditorPage: Sendable {
        typealias Option = SelectOption

        struct Problem: Sendable {
            var severity: String
            var path: String
            var message: String
        }

        /// The default value or one conditional value.
        struct ValueField: Sendable {
            var id: String
            /// What the value is for: `everyone else`, or the condition's name.
            var label: String
            /// The fieldset's legend: `Everyone else`, or the condition's place and name.
            var legend: String
            var conditionName: String
            /// The condition's expression, shown beside its value; nil for everyone else.
            var expression: String?
            var modes: [Option]
            var value: String
            /// A Boolean flag's value is chosen (true or false), not typed.
            var isBoolean: Bool
            var booleanOptions: [Option]
            var managedNote: String?
            var problems: [Problem]
            var hasProblems: Bool
            /// Among the conditions the flag uses: can move up or down among them.
            var movable: Bool
            var canMoveUp: Bool
            var canMoveDown: Bool
        }

        var isNew: Bool
        var key: String
        var action: String
        var deleteAction: String?
        var back: String
        var csrf: String
        var canEdit: Bool
        var types: [Option]
        var defaultValue: ValueField
        /// The conditions the flag has a value for, in the template's order.
        var usedValues: [ValueField]
        /// Every other condition, behind "add a value for another condition".
        var otherValues: [ValueField]
        var hasOtherValues: Bool
        var hasUsedValues: Bool
        /// The used conditions' names, one a line, in order: the script rewrites it as people
        /// reorder, and saving applies it.
        var conditionOrder: String
        var shadows: [ShadowNotice]
        var hasShadows: Bool
        var canMove: Bool
        var title: String
        var description: String
        var category: String
        var allowedValues: String
        var realtime: Bool
        var keyProblems: [Problem]
        var typeProblems: [Problem]
        var descriptionProblems: [Problem]
        var errorCount: Int
        /// Stored, not computed: the template engine reads stored properties only.
        var hasKeyProblems: Bool
        var hasTypeProblems: Bool
        var hasDescriptionProblems: Bool
        var liveSummary: String?
        /// A new flag only: the project's other environments the person may publish in, each a
        /// checkbox `also_{id}` ("add it there too", into the person's draft of each).
        var alsoEnvironments: [Option] = []
        var hasAlsoEnvironments: Bool = false
        /// The rollout the flag is under (draft, running or paused): its page and where it stands.
        var rollout: RolloutLink? = nil
        /// A new rollout of this flag, for people who may publish.
        var newRolloutHref: String? = nil
    }

    struct RolloutLink: Sendable {
        var id: String
        var href: String
        var state: String
        var position: String
    }

    /// What a submitted editor form says about one value: not set, an explicit value, the app's
    /// own default, or a Firebase-managed value kept as it was.
    enum ValueMode: String, Sendable {
        case none, value
        case inApp = "in-app"
        case keep
    }

    // MARK: Pages

    @Sendable func newFlagPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let copy = try await workingCopy(key, user: user)
        let parameter = TemplateParameter(key: "", defaultValue: .value("false"), valueType: .boolean)
        var page = editorPage(
            parameter,
            isNew: true,
            in: copy.template,
            environment: key,
            csrf: session.csrfToken,
            canEdit: true,
            issues: [],
            live: nil
        )
        page.alsoEnvironments = try await otherEnvironments(of: key, principal: principal).map {
            SelectOption(value: "also_" + $0.id, label: $0.name, selected: false)
        }
        page.hasAlsoEnvironments = !page.alsoEnvironments.isEmpty
        return renderer.render(
            .flagEditor,
            chrome: try await environmentChrome(
                title: "New flag",
                user: user,
                project: project,
                environment: environment,
                tab: "flags"
            ),
            page: page,
            context: context
        )
    }

    @Sendable func editFlagPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let flagKey = try flagKey(context)
        let copy = try await workingCopy(key, user: user)
        guard let parameter = copy.template.parameter(forKey: flagKey) else {
            throw ConsolePageError.notFound(
                copy.draft != nil && copy.live.parameter(forKey: flagKey) != nil
                    ? "your draft removes \"\(flagKey)\"; discard the draft on the review page to get it back"
                    : "\(key) has no flag \"\(flagKey)\""
            )
        }
        let issues = ParameterIssues.issues(about: flagKey, in: copy.parse(copy.template).validate())
        var chrome = try await environmentChrome(
            title: flagKey,
            user: user,
            project: project,
            environment: environment,
            tab: "flags"
        )
        if let saved = request.uri.queryParameters.get("saved") {
            chrome.flash = .ok(
                Int(saved).map { $0 > 1 } == true
                    ? "Saved to your drafts of \(saved) environments. Nothing is live until you review and publish each."
                    : "Saved to your draft. Nothing is live until you review and publish it."
            )
        } else if let moved = request.uri.queryParameters.get("ordered") {
            chrome.flash = .ok("Moved \(moved) in your draft's condition order. Nothing is live until you publish it.")
        }
        var page = editorPage(
            parameter,
            isNew: false,
            in: copy.template,
            environment: key,
            csrf: session.csrfToken,
            canEdit: principal.permits(.publish(key)),
            issues: issues,
            live: copy.live.parameter(forKey: flagKey)
        )
        if let rollout = try await RolloutsController.rolloutsByFlag(RolloutStore(engine: store.engine), key)[flagKey] {
            page.rollout = RolloutLink(
                id: rollout.id,
                href: RolloutsController.path(key, rollout.id),
                state: RolloutsController.stateLabel(rollout.state),
                position: RolloutsController.position(rollout)
            )
        } else if principal.permits(.publish(key)), copy.live.parameter(forKey: flagKey) != nil {
            page.newRolloutHref =
                ConsolePaths.environment(key) + "/rollouts/new?flag=" + ConsolePaths.encodeQueryValue(flagKey)
        }
        return renderer.render(.flagEditor, chrome: chrome, page: page, context: context)
    }

    // MARK: Saving

    @Sendable func saveNewFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await save(request, context: context, existingKey: nil)
    }

    @Sendable func saveFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await save(request, context: context, existingKey: try flagKey(context))
    }

    private func save(_ request: Request, context: VaneRequestContext, existingKey: String?) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context, limit: .templateContent)
        let (key, project, environment) = try await self.environment(context)
        let copy = try await workingCopy(key, user: user)
        let existing: TemplateParameter?
        if let existingKey {
            guard let parameter = copy.template.parameter(forKey: existingKey) else {
                throw ConsolePageError.notFound("\(key) has no flag \"\(existingKey)\" in your draft any more")
            }
            existing = parameter
        } else {
            existing = nil
        }
        let parameter = Self.parameter(from: form, existing: existing, conditions: copy.template.conditions)
        var template = copy.template
        var issues: [ValidationIssue] = []
        if existing == nil, copy.template.parameter(forKey: parameter.key) != nil {
            issues.append(
                ValidationIssue(
                    .error,
                    at: JSONPath.root.appending("parameters").appending(parameter.key),
                    rule: "duplicate-key",
                    "a flag named \"\(parameter.key)\" exists already; open it from the flags page to change it"
                )
            )
        } else if let replaced = TemplateEdits.replacing(parameter, in: template) {
            template = replaced
        } else {
            template.parameters.append(parameter)
        }
        // The order of the flag's conditions, as the script left it or one step of the plain
        // form's move buttons; a stale order (the conditions changed meanwhile) is ignored.
        var order = (form.fields["condition_order"] ?? "").split(whereSeparator: \.isNewline).map(String.init)
        let move = form.text("move").flatMap(Self.moveStep)
        if let move, let index = order.firstIndex(of: move.name) {
            let target = move.up ? index - 1 : index + 1
            if order.indices.contains(target) { order.swapAt(index, target) }
        }
        if !order.isEmpty, let reordered = template.reorderingConditions(order) { template = reordered }
        issues += ParameterIssues.issues(about: parameter.key, in: copy.parse(template).validate())
        // A new flag may go into the person's drafts of other environments too: all or none.
        var elsewhere: [(key: EnvironmentKey, copy: WorkingCopy, template: ConfigTemplate)] = []
        var also: [SelectOption] = []
        if existing == nil {
            for other in try await otherEnvironments(of: key, principal: principal) {
                let chosen = form.text("also_" + other.id) != nil
                also.append(SelectOption(value: "also_" + other.id, label: other.name, selected: chosen))
                guard chosen, !issues.contains(where: { $0.severity == .error }) else { continue }
                let otherKey = EnvironmentKey(projectId: key.projectId, environmentId: other.id)
                let otherCopy = try await workingCopy(otherKey, user: user)
                do {
                    let added = try FlagCopying.adding(parameter.key, from: template, into: otherCopy.template)
                    elsewhere.append((otherKey, otherCopy, added.template))
                } catch {
                    issues.append(
                        ValidationIssue(
                            .error,
                            at: JSONPath.root.appending("parameters").appending(parameter.key),
                            rule: "flag-copy",
                            "not added to \(other.name): \(error.description)"
                        )
                    )
                }
            }
        }
        if issues.contains(where: { $0.severity == .error }) {
            var page = editorPage(
                parameter,
                isNew: existing == nil,
                in: copy.template,
                environment: key,
                csrf: session.csrfToken,
                canEdit: true,
                issues: issues,
                live: copy.live.parameter(forKey: parameter.key)
            )
            page.alsoEnvironments = also
            page.hasAlsoEnvironments = !also.isEmpty
            var chrome = try await environmentChrome(
                title: existing == nil ? "New flag" : parameter.key,
                user: user,
                project: project,
                environment: environment,
                tab: "flags"
            )
            let count = issues.filter { $0.severity == .error }.count
            chrome.flash = .error(
                "Not saved: \(count) problem\(count == 1 ? "" : "s") to fix, shown at \(count == 1 ? "its field" : "their fields")."
            )
            return renderer.render(
                .flagEditor,
                chrome: chrome,
                page: page,
                context: context,
                status: .unprocessableContent
            )
        }
        try await saveDraft(key, user: user, template: template, copy: copy)
        for other in elsewhere {
            try await saveDraft(other.key, user: user, template: other.template, copy: other.copy)
        }
        let query =
            move.map { "ordered=" + ConsolePaths.encodeQueryValue($0.name) }
            ?? "saved=\(1 + elsewhere.count)"
        throw ConsoleRedirect(
            location: "\(ConsolePaths.environment(key))/flags/\(ConsolePaths.encode(parameter.key))/edit?\(query)"
        )
    }

    /// The plain form's move button: `up:name` or `down:name`.
    static func moveStep(_ value: String) -> (name: String, up: Bool)? {
        guard let colon = value.firstIndex(of: ":") else { return nil }
        let direction = value[..<colon]
        guard direction == "up" || direction == "down" else { return nil }
        return (String(value[value.index(after: colon)...]), direction == "up")
    }

    @Sendable func deleteFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let flagKey = try flagKey(context)
        let copy = try await workingCopy(key, user: user)
        guard let template = TemplateEdits.removing(flagKey, from: copy.template) else {
            throw ConsolePageError.notFound("your draft of \(key) has no flag \"\(flagKey)\"")
        }
        try await saveDraft(key, user: user, template: template, copy: copy)
        throw ConsoleRedirect(location: "\(ConsolePaths.environment(key))/review")
    }

    // MARK: Form ⇄ parameter

    func flagKey(_ context: VaneRequestContext) throws -> String {
        guard let key = context.parameters.get("key") else {
            throw ConsolePageError.notFound("the address names no flag")
        }
        return key
    }

    /// The parameter a submitted form describes, keeping what the form does not show (unknown
    /// fields, secret permission, conditional values for conditions the template lacks).
    static func parameter(
        from form: ConsoleForm,
        existing: TemplateParameter?,
        conditions: [TemplateCondition]
    ) -> TemplateParameter {
        var parameter = existing ?? TemplateParameter(key: form.text("key") ?? "")
        if let type = form.text("type") { parameter.valueType = ParameterValueType(rawValue: type) }
        parameter.defaultValue = value(
            mode: form.text("default_mode"),
            text: form.fields["default_value"] ?? "",
            existing: existing?.defaultValue
        )
        var conditional: [ConditionalValue] = []
        for (index, condition) in conditions.enumerated() {
            // The hidden name guards against the conditions changing while the page was open.
            let prefix = "c\(index)_"
            let name = form.fields[prefix + "name"] ?? condition.name
            guard name == condition.name else { continue }
            let previous = existing?.conditionalValue(for: condition.name)
            if let value = value(
                mode: form.text(prefix + "mode"),
                text: form.fields[prefix + "value"] ?? "",
                existing: previous
            ) {
                conditional.append(ConditionalValue(conditionName: condition.name, value: value))
            }
        }
        let shown = Set(conditions.map(\.name))
        conditional += (existing?.conditionalValues ?? []).filter { !shown.contains($0.conditionName) }
        parameter.conditionalValues = conditional
        parameter.description = form.text("description")
        var metadata = parameter.metadata ?? ParameterMetadata()
        metadata.title = form.text("title")
        metadata.category = form.text("category")
        metadata.allowedValues = (form.fields["allowed_values"] ?? "")
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        metadata.realtime = form.text("realtime") != nil
        let isEmpty =
            metadata.title == nil && metadata.category == nil && metadata.allowedValues.isEmpty && !metadata.realtime
            && !metadata.allowSecrets && metadata.unknownFields.isEmpty
        parameter.metadata = isEmpty ? nil : metadata
        return parameter
    }

    /// One value from its mode and text. Values are kept exactly as typed: whitespace can matter
    /// to a string flag.
    static func value(mode: String?, text: String, existing: ParameterValue?) -> ParameterValue? {
        switch ValueMode(rawValue: mode ?? "") ?? .none {
        case .none: return nil
        case .value: return .value(text.replacingOccurrences(of: "\r\n", with: "\n"))
        case .inApp: return .useInAppDefault
        case .keep: return existing
        }
    }

    func editorPage(
        _ parameter: TemplateParameter,
        isNew: Bool,
        in template: ConfigTemplate,
        environment key: EnvironmentKey,
        csrf: String,
        canEdit: Bool,
        issues: [ValidationIssue],
        live: TemplateParameter?
    ) -> FlagEditorPage {
        func problems(_ matches: ([JSONPath.Component]) -> Bool) -> [FlagEditorPage.Problem] {
            issues.compactMap { issue in
                guard let rest = ParameterIssues.relativePath(of: issue.path, parameter: parameter.key), matches(rest)
                else {
                    return nil
                }
                return FlagEditorPage.Problem(
                    severity: issue.severity.rawValue,
                    path: issue.path.description,
                    message: issue.message
                )
            }
        }
        func field(
            id: String,
            label: String,
            legend: String,
            conditionName: String,
            expression: String?,
            value: ParameterValue?,
            optional: Bool
        )
            -> FlagEditorPage.ValueField
        {
            let mode: ValueMode
            var text = ""
            var managed: String?
            switch value?.kind {
            case nil: mode = .none
            case .value(let string)?:
                mode = .value
                text = string
            case .useInAppDefault?: mode = .inApp
            case .managed(let kind)?:
                mode = .keep
                managed = "A Firebase-managed value (\(kind)), kept as it is; Vane serves it as the app's own default."
            }
            var choices: [(ValueMode, String)] = [
                (.value, "Value"), (.inApp, "The app's own default"),
                (.none, optional ? "No value for this condition" : "No default value"),
            ]
            if managed != nil { choices.insert((.keep, "Keep the managed value"), at: 0) }
            let path: [JSONPath.Component] =
                conditionName.isEmpty ? [.key("defaultValue")] : [.key("conditionalValues"), .key(conditionName)]
            let found = problems { Array($0.prefix(path.count)) == path }
            // A Boolean's stored text is kept when it is neither true nor false, so saving never
            // changes it silently: such a value is typed until it is fixed. A new flag's type is
            // still being chosen on the page, so its values are typed (and checked as typed).
            let isBoolean =
                !isNew && parameter.valueType == .boolean && (text.isEmpty || ["true", "false"].contains(text))
            return FlagEditorPage.ValueField(
                id: id,
                label: label,
                legend: legend,
                conditionName: conditionName,
                expression: expression,
                modes: choices.map { FlagEditorPage.Option(value: $0.0.rawValue, label: $0.1, selected: $0.0 == mode) },
                value: text,
                isBoolean: isBoolean,
                booleanOptions: ["true", "false"].map {
                    FlagEditorPage.Option(value: $0, label: $0, selected: $0 == (text.isEmpty ? "false" : text))
                },
                managedNote: managed,
                problems: found,
                hasProblems: !found.isEmpty,
                movable: false,
                canMoveUp: false,
                canMoveDown: false
            )
        }
        let base = ConsolePaths.environment(key)
        let type = parameter.valueType ?? .string
        let types: [(ParameterValueType, String)] = [
            (.boolean, "Boolean"), (.number, "Number"), (.string, "String"), (.json, "JSON"),
        ]
        var typeOptions = types.map {
            FlagEditorPage.Option(value: $0.0.rawValue, label: $0.1, selected: $0.0 == type)
        }
        if !types.contains(where: { $0.0 == type }) {
            typeOptions.append(FlagEditorPage.Option(value: type.rawValue, label: type.rawValue, selected: true))
        }
        let metadata = parameter.keyMetadata
        let keyProblems = problems { $0.isEmpty }
        let typeProblems = problems { $0.first == .key("valueType") }
        let descriptionProblems = problems { $0.first == .key("description") }
        let encodedKey = ConsolePaths.encode(parameter.key)
        var withParameter = template
        if let replaced = TemplateEdits.replacing(parameter, in: template) {
            withParameter = replaced
        } else {
            withParameter.parameters.append(parameter)
        }
        // Parsed once: the expressions beside the values and the shadow check read it.
        let parsed = ParsedTemplate(withParameter)
        var used: [FlagEditorPage.ValueField] = []
        var others: [FlagEditorPage.ValueField] = []
        for (index, condition) in template.conditions.enumerated() {
            let value = parameter.conditionalValue(for: condition.name)
            let expression: String
            switch condition.source {
            case .expression(let text): expression = text
            case .structured:
                expression = parsed.conditions[index].expression?.expressionText ?? "(a structured condition)"
            }
            let made = field(
                id: "c\(index)",
                label: condition.name,
                legend: value == nil ? condition.name : "Priority \(used.count + 1): \(condition.name)",
                conditionName: condition.name,
                expression: expression,
                value: value,
                optional: true
            )
            if value == nil { others.append(made) } else { used.append(made) }
        }
        for index in used.indices {
            used[index].movable = canEdit && used.count > 1
            used[index].canMoveUp = index > 0
            used[index].canMoveDown = index < used.count - 1
        }
        let shadows = ShadowNotice.notices(
            parsed.shadowedValues().filter { $0.parameterKey == parameter.key },
            key: key,
            returnTo: "flag"
        )
        return FlagEditorPage(
            isNew: isNew,
            key: parameter.key,
            action: isNew ? "\(base)/flags/new" : "\(base)/flags/\(encodedKey)/edit",
            deleteAction: isNew ? nil : "\(base)/flags/\(encodedKey)/delete",
            back: "\(base)/flags",
            csrf: csrf,
            canEdit: canEdit,
            types: typeOptions,
            defaultValue: field(
                id: "default",
                label: "everyone else",
                legend: "Everyone else",
                conditionName: "",
                expression: nil,
                value: parameter.defaultValue,
                optional: false
            ),
            usedValues: used,
            otherValues: others,
            hasOtherValues: !others.isEmpty,
            hasUsedValues: !used.isEmpty,
            conditionOrder: used.map(\.conditionName).joined(separator: "\n"),
            shadows: shadows,
            hasShadows: !shadows.isEmpty,
            canMove: canEdit,
            title: metadata.title ?? "",
            description: metadata.description ?? "",
            category: metadata.category ?? "",
            allowedValues: metadata.allowedValues.joined(separator: "\n"),
            realtime: metadata.realtime,
            keyProblems: keyProblems,
            typeProblems: typeProblems,
            descriptionProblems: descriptionProblems,
            errorCount: issues.filter { $0.severity == .error }.count,
            hasKeyProblems: !keyProblems.isEmpty,
            hasTypeProblems: !typeProblems.isEmpty,
            hasDescriptionProblems: !descriptionProblems.isEmpty,
            liveSummary: isNew
                ? nil
                : live.map {
                    "Live now: \(Self.shortValue($0.defaultValue)) for everyone else, \($0.conditionalValues.count) conditional value(s)."
                }
                    ?? "Not live yet: this flag is new in your draft."
        )
    }
}
