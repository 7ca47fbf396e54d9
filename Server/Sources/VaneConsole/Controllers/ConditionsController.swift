import Foundation
import HTTPTypes
import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// The conditions of an environment: their order, their expressions, and which flags use them.
///
/// Every page shows the person's working copy (their draft, or the live template until their
/// first change), and every change goes into their draft through ``saveDraft(_:user:template:copy:base:)``:
/// nothing here publishes.
struct ConditionsController: DraftPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let analyses: DraftAnalysisCache
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("conditions", use: conditionsPage)
        routes.environmentEditor.get("conditions/new", use: newConditionPage)
        routes.environmentEditor.post("conditions/new", use: saveCondition)
        routes.environmentEditor.post("conditions/order", use: reorderConditions)
        routes.environment.post("conditions/check", use: checkCondition)
        routes.environment.post("conditions/build", use: buildConditionRule)
        routes.environmentEditor.get("conditions/:name/edit", use: editConditionPage)
        routes.environmentEditor.post("conditions/:name/edit", use: saveCondition)
        routes.environmentEditor.post("conditions/:name/move", use: moveCondition)
        routes.environmentEditor.post("conditions/:name/delete", use: deleteCondition)
    }

    // MARK: Page data

    /// A flag that has a conditional value for a condition, with the link to its editor.
    struct ConditionUser: Sendable {
        var key: String
        var href: String
    }

    /// The list of conditions.
    struct ConditionsPage: Sendable {
        struct Row: Sendable {
            var position: Int
            var name: String
            var tagLabel: String?
            var tagClass: String
            var expression: String
            var structured: Bool
            var usedBy: [ConditionUser]
            var editHref: String
            var moveAction: String
            var deleteAction: String
            var deleteConfirm: String
            var canMoveUp: Bool
            var canMoveDown: Bool
        }

        /// A delete that was refused because flags use the condition.
        struct Refusal: Sendable {
            var name: String
            var flags: [ConditionUser]
        }

        var rows: [Row]
        var count: Int
        var canEdit: Bool
        var newHref: String
        var orderAction: String
        var order: String
        var csrf: String
        var source: String
        var behind: String?
        var refusal: Refusal?
    }

    /// The form for a new condition or an existing one.
    struct ConditionEditorPage: Sendable {
        typealias Option = SelectOption

        /// The expression cut around a syntax problem, to mark the column.
        struct ExpressionError: Sendable {
            var message: String
            var before: String
            var marked: String
            var after: String
        }

        var heading: String
        var action: String
        var checkAction: String
        var buildAction: String
        var back: String
        var csrf: String
        var name: String
        var expression: String
        var colors: [Option]
        var renameNote: String?
        var nameError: String?
        var expressionError: ExpressionError?
        var ruleError: String?
        var ruleAdded: String?
        var countries: String
        var languages: String
        var versionOperators: [Option]
        var version: String
        var seed: String
        var percentFrom: String
        var percentTo: String
        var signalKey: String
        var signalOperators: [Option]
        var signalValue: String
        var dateFrom: String
        var dateUntil: String
        var zone: String
    }

    /// The colours Firebase's console offers for a condition's tag.
    static let conditionTagColors = [
        "BLUE", "BROWN", "CYAN", "DEEP_ORANGE", "GREEN", "INDIGO", "LIME", "ORANGE", "PINK", "PURPLE", "TEAL",
    ]

    /// `DEEP_ORANGE` → `Deep orange`.
    static func tagColorLabel(_ color: String) -> String {
        let words = color.lowercased().replacingOccurrences(of: "_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    // MARK: Shared steps

    /// The condition name in the path, percent-decoded.
    func conditionName(_ context: VaneRequestContext) throws(ConsolePageError) -> String {
        guard let raw = context.parameters.get("name") else { throw ConsolePageError.notFound("no condition named") }
        return raw.removingPercentEncoding ?? raw
    }

    /// Every flag with a conditional value for `name`, with links to their editors.
    func conditionUsers(_ name: String, in template: ConfigTemplate, key: EnvironmentKey) -> [ConditionUser] {
        let base = ConsolePaths.environment(key)
        return template.allParameters.filter { $0.conditionalValue(for: name) != nil }.map {
            ConditionUser(key: $0.key, href: "\(base)/flags/\(ConsolePaths.encode($0.key))/edit")
        }
    }

    /// What a person about to change conditions needs: who, where, their working copy.
    struct ConditionEditing {
        var user: UserAccount
        var principal: Principal
        var key: EnvironmentKey
        var project: Project
        var environment: VaneServerCore.Environment
        var copy: WorkingCopy
        var csrf: String
    }

    /// The signed-in person, checked to edit the environment, and their working copy.
    func conditionEditing(_ request: Request, _ context: VaneRequestContext) async throws -> ConditionEditing {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let copy = try await workingCopy(key, user: user)
        return ConditionEditing(
            user: user,
            principal: principal,
            key: key,
            project: project,
            environment: environment,
            copy: copy,
            csrf: session.csrfToken
        )
    }

    /// Sends the person back to the list after a change, with `query` saying what changed.
    func backToConditions(_ key: EnvironmentKey, _ query: String) -> ConsoleRedirect {
        ConsoleRedirect(location: ConsolePaths.environment(key) + "/conditions?" + query)
    }

    // MARK: The list

    @Sendable func conditionsPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await renderConditions(request, context: context, refusal: nil)
    }

    func renderConditions(
        _ request: Request,
        context: VaneRequestContext,
        refusal: ConditionsPage.Refusal?
    ) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let canEdit = principal.permits(.publish(key))
        let copy = try await workingCopy(key, user: user)
        let template = copy.template
        let base = ConsolePaths.environment(key) + "/conditions"
        let parsed = copy.parse(template)
        var rows: [ConditionsPage.Row] = []
        for (index, condition) in template.conditions.enumerated() {
            let encoded = ConsolePaths.encode(condition.name)
            let expression: String
            var structured = false
            switch condition.source {
            case .expression(let text): expression = text
            case .structured:
                structured = true
                expression = parsed.conditions[index].expression?.expressionText ?? "(a structured condition)"
            }
            let users = conditionUsers(condition.name, in: template, key: key)
            let color = condition.tagColor.flatMap { Self.conditionTagColors.contains($0) ? $0 : nil }
            rows.append(
                ConditionsPage.Row(
                    position: index + 1,
                    name: condition.name,
                    tagLabel: color.map(Self.tagColorLabel),
                    tagClass: color.map { "tag-color-" + $0.lowercased().replacingOccurrences(of: "_", with: "-") }
                        ?? "",
                    expression: expression,
                    structured: structured,
                    usedBy: users,
                    editHref: "\(base)/\(encoded)/edit",
                    moveAction: "\(base)/\(encoded)/move",
                    deleteAction: "\(base)/\(encoded)/delete",
                    deleteConfirm: "Delete the condition \(condition.name) from your draft?",
                    canMoveUp: index > 0,
                    canMoveDown: index < template.conditions.count - 1
                )
            )
        }
        let source: String
        if let draft = copy.draft {
            source =
                "You are looking at your draft (\(draft.changeCount) change\(draft.changeCount == 1 ? "" : "s") on version \(copy.baseVersion)). Changes here stay in it until you publish it from Review."
        } else if canEdit {
            source =
                "You are looking at the live version \(copy.liveVersion). Your first change starts your draft; nothing is published until you publish it from Review."
        } else {
            source = "You are looking at the live version \(copy.liveVersion)."
        }
        let behind =
            copy.draft != nil && copy.liveVersion != copy.baseVersion
            ? "Version \(copy.liveVersion) was published after your draft started from version \(copy.baseVersion)."
            : nil
        let page = ConditionsPage(
            rows: rows,
            count: rows.count,
            canEdit: canEdit,
            newHref: base + "/new",
            orderAction: base + "/order",
            order: template.conditions.map(\.name).joined(separator: "\n"),
            csrf: session.csrfToken,
            source: source,
            behind: behind,
            refusal: refusal
        )
        var chrome = try await environmentChrome(
            title: "Conditions",
            user: user,
            project: project,
            environment: environment,
            tab: "conditions"
        )
        let query = request.uri.queryParameters
        if let name = query.get("saved") {
            chrome.flash = .ok("Saved the condition \(name) in your draft.")
        } else if let name = query.get("deleted") {
            chrome.flash = .ok("Deleted the condition \(name) from your draft.")
        } else if let name = query.get("moved"),
            let position = template.conditions.firstIndex(where: { $0.name == String(name) })
        {
            chrome.flash = .ok("Moved \(name) to position \(position + 1) in your draft.")
        } else if query.get("reordered") != nil {
            chrome.flash = .ok("Saved the new order in your draft.")
        }
        return renderer.render(
            .conditions,
            chrome: chrome,
            page: page,
            context: context,
            status: refusal == nil ? .ok : .conflict
        )
    }

    // MARK: Order

    @Sendable func moveCondition(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context)
        let editing = try await conditionEditing(request, context)
        let name = try conditionName(context)
        var template = editing.copy.template
        guard let index = template.conditions.firstIndex(where: { $0.name == name }) else {
            throw ConsolePageError.notFound("your working copy has no condition \"\(name)\"")
        }
        let target: Int
        switch form.text("to") ?? "" {
        case "up": target = index - 1
        case "down": target = index + 1
        case "above":
            // The fix a shadowed value offers (flag editor, review): just above the condition
            // that shadows it, through the same rule as `ShadowedValue` names.
            let other = form.text("above") ?? ""
            guard template.condition(named: other) != nil else {
                throw ConsolePageError.notFound("your working copy has no condition \"\(other)\"")
            }
            if let moved = template.movingCondition(name, above: other) {
                try await saveDraft(editing.key, user: editing.user, template: moved, copy: editing.copy)
            }
            throw ConsoleRedirect(location: Self.returnPath(form, key: editing.key, moved: name))
        default: throw ConsolePageError.badRequest("a condition moves \"up\", \"down\" or \"above\" another")
        }
        if template.conditions.indices.contains(target) {
            template.conditions.swapAt(index, target)
            try await saveDraft(editing.key, user: editing.user, template: template, copy: editing.copy)
        }
        throw backToConditions(editing.key, "moved=" + ConsolePaths.encodeQueryValue(name))
    }

    /// Where a move from another page goes back to: the review, a flag's editor, or the list.
    static func returnPath(_ form: ConsoleForm, key: EnvironmentKey, moved name: String) -> String {
        let base = ConsolePaths.environment(key)
        let query = "ordered=" + ConsolePaths.encodeQueryValue(name)
        switch form.text("return") {
        case "review": return "\(base)/review?\(query)"
        case "flag":
            if let flag = form.text("flag") { return "\(base)/flags/\(ConsolePaths.encode(flag))/edit?\(query)" }
            return "\(base)/conditions?moved=" + ConsolePaths.encodeQueryValue(name)
        default: return "\(base)/conditions?moved=" + ConsolePaths.encodeQueryValue(name)
        }
    }

    /// The whole order at once (drag and drop): `order` holds every name, one a line.
    @Sendable func reorderConditions(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context, limit: .templateContent)
        let editing = try await conditionEditing(request, context)
        let names = (form.fields["order"] ?? "").split(whereSeparator: \.isNewline).map(String.init)
        var template = editing.copy.template
        guard names.sorted() == template.conditions.map(\.name).sorted() else {
            throw ConsolePageError(
                status: .conflict,
                heading: "The conditions changed",
                message:
                    "the new order does not name exactly the conditions of your working copy; reload the conditions page and move them again"
            )
        }
        var remaining = template.conditions
        var ordered: [TemplateCondition] = []
        for name in names {
            if let index = remaining.firstIndex(where: { $0.name == name }) {
                ordered.append(remaining.remove(at: index))
            }
        }
        template.conditions = ordered
        try await saveDraft(editing.key, user: editing.user, template: template, copy: editing.copy)
        throw backToConditions(editing.key, "reordered=1")
    }

    // MARK: Delete

    @Sendable func deleteCondition(_ request: Request, context: VaneRequestContext) async throws -> Response {
        _ = try await ConsoleForm.read(request, context: context)
        let editing = try await conditionEditing(request, context)
        let name = try conditionName(context)
        var template = editing.copy.template
        guard let index = template.conditions.firstIndex(where: { $0.name == name }) else {
            throw ConsolePageError.notFound("your working copy has no condition \"\(name)\"")
        }
        let users = conditionUsers(name, in: template, key: editing.key)
        guard users.isEmpty else {
            return try await renderConditions(
                request,
                context: context,
                refusal: ConditionsPage.Refusal(name: name, flags: users)
            )
        }
        template.conditions.remove(at: index)
        try await saveDraft(editing.key, user: editing.user, template: template, copy: editing.copy)
        throw backToConditions(editing.key, "deleted=" + ConsolePaths.encodeQueryValue(name))
    }

    // MARK: The editor

    @Sendable func newConditionPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let editing = try await conditionEditing(request, context)
        let page = editorPage(editing, original: nil, fields: [:])
        return try await renderEditor(editing, page: page, context: context)
    }

    @Sendable func editConditionPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let editing = try await conditionEditing(request, context)
        let name = try conditionName(context)
        guard let condition = editing.copy.template.condition(named: name) else {
            throw ConsolePageError.notFound("your working copy has no condition \"\(name)\"")
        }
        guard case .expression(let expression) = condition.source else {
            throw ConsolePageError.badRequest(
                "\"\(name)\" is a server template's structured condition; change it in the template's JSON"
            )
        }
        let fields = ["name": name, "expression": expression, "tagColor": condition.tagColor ?? ""]
        return try await renderEditor(
            editing,
            page: editorPage(editing, original: name, fields: fields),
            context: context
        )
    }

    /// The editor's page with the submitted (or stored) fields filled in.
    func editorPage(_ editing: ConditionEditing, original: String?, fields: [String: String]) -> ConditionEditorPage {
        let base = ConsolePaths.environment(editing.key) + "/conditions"
        func field(_ name: String) -> String { fields[name] ?? "" }
        let color = field("tagColor")
        let versionOperator = fields["rule_version_op"] ?? ">="
        let signalOperator = fields["rule_signal_op"] ?? ConditionBuilder.SignalOperator.exactlyMatches.rawValue
        let users = original.map { conditionUsers($0, in: editing.copy.template, key: editing.key) } ?? []
        let renameNote =
            users.isEmpty
            ? nil
            : "Used by \(users.map(\.key).joined(separator: ", ")); renaming the condition renames it in their conditional values too."
        return ConditionEditorPage(
            heading: original.map { "Edit condition \($0)" } ?? "New condition",
            action: original.map { "\(base)/\(ConsolePaths.encode($0))/edit" } ?? "\(base)/new",
            checkAction: base + "/check",
            buildAction: base + "/build",
            back: base,
            csrf: editing.csrf,
            name: field("name"),
            expression: field("expression"),
            colors: [ConditionEditorPage.Option(value: "", label: "No colour", selected: color.isEmpty)]
                + Self.conditionTagColors.map {
                    ConditionEditorPage.Option(value: $0, label: Self.tagColorLabel($0), selected: $0 == color)
                },
            renameNote: renameNote,
            countries: field("rule_countries"),
            languages: field("rule_languages"),
            versionOperators: ConditionBuilder.comparisons.map {
                ConditionEditorPage.Option(value: $0, label: $0, selected: $0 == versionOperator)
            },
            version: field("rule_version"),
            seed: field("rule_seed"),
            percentFrom: fields["rule_percent_from"] ?? "0",
            percentTo: fields["rule_percent_to"] ?? "50",
            signalKey: field("rule_signal_key"),
            signalOperators: ConditionBuilder.SignalOperator.allCases.map {
                ConditionEditorPage.Option(value: $0.rawValue, label: $0.label, selected: $0.rawValue == signalOperator)
            },
            signalValue: field("rule_signal_value"),
            dateFrom: field("rule_date_from"),
            dateUntil: field("rule_date_until"),
            zone: fields["rule_zone"] ?? "UTC"
        )
    }

    func renderEditor(
        _ editing: ConditionEditing,
        page: ConditionEditorPage,
        context: VaneRequestContext,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let chrome = try await environmentChrome(
            title: page.heading,
            user: editing.user,
            project: editing.project,
            environment: editing.environment,
            tab: "conditions"
        )
        return renderer.render(.conditionEdit, chrome: chrome, page: page, context: context, status: status)
    }

    /// Saves a new or edited condition into the draft, or, when the form's `add` button was
    /// used, adds the builder's rule to the expression and shows the form again.
    @Sendable func saveCondition(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context, limit: .templateContent)
        let editing = try await conditionEditing(request, context)
        var original: String?
        if context.parameters.get("name") != nil { original = try conditionName(context) }
        var template = editing.copy.template
        let index = original.flatMap { name in template.conditions.firstIndex { $0.name == name } }
        if let original, index == nil {
            throw ConsolePageError.notFound("your working copy has no condition \"\(original)\"")
        }
        var fields = form.fields
        fields["name"] = form.text("name") ?? ""
        fields["expression"] = form.text("expression") ?? ""
        var page = editorPage(editing, original: original, fields: fields)

        if let kind = form.text("add") {
            do throws(ConditionBuilder.Problem) {
                let rule = try ConditionBuilder.expression(for: ConditionBuilder.rule(kind: kind, fields: fields))
                page.expression = ConditionBuilder.appending(rule, to: page.expression)
                page.ruleAdded = "Added \(rule) to the expression. Nothing is saved until you save the condition."
            } catch {
                page.ruleError = error.message
            }
            return try await renderEditor(editing, page: page, context: context, status: .ok)
        }

        let name = page.name
        page.nameError = ConditionRenaming.problem(with: name, in: template, at: index)
        let check = ConditionCheck(page.expression)
        if page.expression.isEmpty {
            page.expressionError = ConditionEditorPage.ExpressionError(
                message: "Write the condition, or add a rule with the builder below.",
                before: "",
                marked: " ",
                after: ""
            )
        } else if !check.ok {
            page.expressionError = ConditionEditorPage.ExpressionError(
                message: check.message ?? "",
                before: check.before,
                marked: check.marked,
                after: check.after
            )
        }
        guard page.nameError == nil, page.expressionError == nil else {
            return try await renderEditor(editing, page: page, context: context, status: .badRequest)
        }
        let color = fields["tagColor"].flatMap { Self.conditionTagColors.contains($0) ? $0 : nil }
        if let index, let original {
            template.conditions[index].name = name
            template.conditions[index].source = .expression(page.expression)
            template.conditions[index].tagColor = color
            if original != name { template = ConditionRenaming.movingValues(from: original, to: name, in: template) }
        } else {
            template.conditions.append(TemplateCondition(name: name, expression: page.expression, tagColor: color))
        }
        try await saveDraft(editing.key, user: editing.user, template: template, copy: editing.copy)
        throw backToConditions(editing.key, "saved=" + ConsolePaths.encodeQueryValue(name))
    }

    // MARK: Script helpers

    /// `{ok, message, column, length}` from the server's own parser, for checking as one types.
    @Sendable func checkCondition(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context, limit: .templateContent)
        _ = try await environment(context)
        let expression = form.fields["expression"]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return JSONResponse.make(ConditionCheck(expression).json)
    }

    /// `{ok, expression, message}`: the builder's rule appended to `expression`, so the script
    /// uses the same builder as the plain form.
    @Sendable func buildConditionRule(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context, limit: .templateContent)
        _ = try await environment(context)
        do throws(ConditionBuilder.Problem) {
            let rule = try ConditionBuilder.expression(
                for: ConditionBuilder.rule(kind: form.text("add") ?? "", fields: form.fields)
            )
            let expression = ConditionBuilder.appending(rule, to: form.fields["expression"] ?? "")
            return JSONResponse.make(
                .object([
                    "ok": true, "expression": .string(expression),
                    "message": .string(
                        "Added \(rule) to the expression. Nothing is saved until you save the condition."
                    ),
                ])
            )
        } catch {
            return JSONResponse.make(.object(["ok": false, "message": .string(error.message)]))
        }
    }
}
