import Foundation
import HTTPTypes
import Hummingbird
import VaneCore
import VaneServerCore

/// "Who gets what": every key's value for a context, with its source and deciding condition.
struct EvaluateController: DraftPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let analyses: DraftAnalysisCache
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("evaluate", use: evaluatePage)
        routes.environmentEditor.post("evaluate/contexts", use: saveEvaluationContext)
        routes.environmentEditor.post("evaluate/contexts/delete", use: deleteEvaluationContext)
    }

    /// The page's data for `evaluate.mustache`.
    struct EvaluatePage: Sendable {
        typealias Option = SelectOption

        /// One input of the context form, with what went wrong with it.
        struct Field: Sendable {
            var id: String
            var name: String
            var label: String
            var value: String
            var hint: String
            var placeholder: String
            var error: String?
        }

        /// One key's value for the context, and in compare mode the other side's.
        struct Row: Sendable {
            var key: String
            var editHref: String?
            var title: String?
            var value: String
            var source: String
            var reason: String
            var condition: String?
            var expression: String?
            var compareValue: String
            var compareSource: String
            var compareReason: String
            var compareCondition: String?
            var differs: Bool
            var search: String
            /// Each of the flag's conditions for the context, in the order evaluation tries them.
            var conditions: [ConditionCell]
            var hasConditions: Bool
        }

        /// One condition of a flag: matched, not matched or shadowed, and the context's bucket
        /// for each of its `percent` rules.
        struct ConditionCell: Sendable {
            var name: String
            var state: String
            var stateClass: String
            var note: String?
            var buckets: [String]
        }

        /// A saved context, with its delete form for editors.
        struct Saved: Sendable {
            var name: String
            var selected: Bool
            var summary: String
        }

        var action: String
        var saveAction: String
        var deleteAction: String
        var csrf: String
        var fields: [Field]
        var signals: Field
        var hasErrors: Bool
        var errorCount: Int
        var saved: [Saved]
        var hasSaved: Bool
        var savedName: String
        var compareOptions: [Option]
        var compare: String
        var comparing: Bool
        var compareLabel: String
        var baseLabel: String
        var query: String
        var onlyDifferences: Bool
        var rows: [Row]
        var shown: Int
        var total: Int
        var differing: Int
        var contextSummary: String
        var canSave: Bool
        var saveName: String
        var saveError: String?
        var compareError: String?
        var version: Int64
        /// Saved contexts × flags: what each saved context gets from each flag of the live version.
        var gridKeys: [GridKey]
        var gridRows: [GridRow]
        var hasGrid: Bool
    }

    /// A column of the grid: a flag, linked to its editor.
    struct GridKey: Sendable {
        var key: String
        var href: String
    }

    /// A row of the grid: one saved context and its value of each flag, in column order.
    struct GridRow: Sendable {
        var name: String
        var values: [String]
    }

    /// What the page was asked for: the context's fields, a saved context, the comparison and the
    /// filters. Read from the query (the page is a plain GET form, so its address can be shared)
    /// or from a POSTed form that re-renders the page.
    struct EvaluateInput: Sendable {
        var fields = EvaluationContextFields()
        var saved = ""
        var compare = ""
        var query = ""
        var onlyDifferences = false

        init(value: (String) -> String?) {
            fields = EvaluationContextFields(value: value)
            saved = value("saved") ?? ""
            compare = value("compare") ?? ""
            query = value("q") ?? ""
            onlyDifferences = value("only") == "differences"
        }
    }

    @Sendable func evaluatePage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let query = ConsoleForm.query(request)
        let input = EvaluateInput { query[$0] }
        var flash: ConsoleChrome.Flash?
        switch query["note"] {
        case "saved": flash = .ok("Saved the context \u{201C}\(input.saved)\u{201D}.")
        case "deleted": flash = .ok("Deleted the saved context.")
        default: flash = nil
        }
        return try await renderEvaluate(request, context: context, input: input, flash: flash)
    }

    /// Saves the context on the page under a name (editors of the environment).
    @Sendable func saveEvaluationContext(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let input = EvaluateInput { form.fields[$0] }
        let name = form.text("name") ?? ""
        func again(_ error: String) async throws -> Response {
            try await renderEvaluate(
                request,
                context: context,
                input: input,
                saveName: name,
                saveError: error,
                status: .badRequest
            )
        }
        guard !name.isEmpty else { return try await again("give the context a name, such as “German iOS user on 2.1”") }
        guard name.count <= SavedContextName.maximumLength else {
            return try await again(
                "a name has at most \(SavedContextName.maximumLength) characters; this one has \(name.count)"
            )
        }
        let parsed = input.fields.parse()
        guard let evaluationContext = parsed.context else {
            return try await again("fix the context first: only a context without errors can be saved")
        }
        try await drafts.saveContext(
            SavedContext(
                projectId: key.projectId,
                name: name,
                context: evaluationContext.json(),
                createTime: Clock.nowMilliseconds()
            ),
            userId: user.id
        )
        throw ConsoleRedirect(location: evaluateLocation(key, saved: name, compare: input.compare, note: "saved"))
    }

    /// Deletes a saved context (editors of the environment).
    @Sendable func deleteEvaluationContext(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        let name = try form.required("name", label: "the saved context's name")
        try await drafts.deleteContext(projectId: key.projectId, name: name)
        throw ConsoleRedirect(
            location: evaluateLocation(key, saved: nil, compare: form.text("compare"), note: "deleted")
        )
    }

    /// `…/evaluate?saved=…&compare=…&note=…`, each part encoded and only when given.
    func evaluateLocation(_ key: EnvironmentKey, saved: String?, compare: String?, note: String) -> String {
        var parts: [String] = []
        if let saved { parts.append("saved=" + ConsolePaths.encodeQueryValue(saved)) }
        if let compare, !compare.isEmpty { parts.append("compare=" + ConsolePaths.encodeQueryValue(compare)) }
        parts.append("note=" + note)
        return ConsolePaths.environment(key) + "/evaluate?" + parts.joined(separator: "&")
    }

    /// The page for `input`: the context read from its fields (or from the saved context it
    /// names), evaluated against the live template and, in compare mode, against the other side.
    func renderEvaluate(
        _ request: Request,
        context: VaneRequestContext,
        input: EvaluateInput,
        flash: ConsoleChrome.Flash? = nil,
        saveName: String = "",
        saveError: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let base = ConsolePaths.environment(key)

        // A saved context fills the fields; without one, the fields say what the context is.
        let savedContexts = try await drafts.savedContexts(projectId: key.projectId)
        var fields = input.fields
        var flash = flash
        if !input.saved.isEmpty {
            if let saved = savedContexts.first(where: { $0.name == input.saved }) {
                fields = EvaluationContextFields(json: saved.context)
            } else {
                flash = .error("There is no saved context \u{201C}\(input.saved)\u{201D} in this project any more.")
            }
        }
        let parsed = fields.parse()

        // The live template, and what to compare it with.
        let copy = try await workingCopy(key, user: user)
        let live = copy.live
        var compareOptions = [EvaluatePage.Option(value: "", label: "Nothing", selected: input.compare.isEmpty)]
        if copy.draft != nil {
            compareOptions.append(
                EvaluatePage.Option(value: "draft", label: "Your draft", selected: input.compare == "draft")
            )
        }
        var otherTemplates: [String: (label: String, template: ConfigTemplate)] = [:]
        for other in try await store.environments(projectId: key.projectId) where other.id != key.environmentId {
            let otherKey = EnvironmentKey(projectId: key.projectId, environmentId: other.id)
            guard principal.permits(.readTemplate(otherKey)) else { continue }
            let value = "environment:" + other.id
            compareOptions.append(
                EvaluatePage.Option(
                    value: value,
                    label: "\(other.name) (version \(other.templateVersion))",
                    selected: input.compare == value
                )
            )
            if input.compare == value {
                let template = try await liveVersion(otherKey).template
                otherTemplates[value] = (other.name, template)
            }
        }
        var compareError: String?
        var comparison: (label: String, template: ConfigTemplate)?
        switch input.compare {
        case "": comparison = nil
        case "draft":
            if let draft = copy.draft {
                comparison = ("Your draft", draft.template)
            } else {
                compareError = "You have no draft of this environment to compare with."
            }
        default:
            comparison = otherTemplates[input.compare]
            if comparison == nil { compareError = "There is no such environment to compare with." }
        }

        var rows: [EvaluatePage.Row] = []
        if let evaluationContext = parsed.context {
            do {
                rows = try EvaluationTable.rows(
                    context: evaluationContext,
                    template: live,
                    comparedWith: comparison?.template,
                    environment: key
                )
            } catch {
                compareError = "\(comparison?.label ?? "The template") does not compile: \(error)"
                rows =
                    (try? EvaluationTable.rows(
                        context: evaluationContext,
                        template: live,
                        comparedWith: nil,
                        environment: key
                    )) ?? []
                comparison = nil
            }
        }
        let words = input.query.lowercased().split(whereSeparator: { $0.isWhitespace })
        let total = rows.count
        let differing = rows.filter(\.differs).count
        let shown = rows.filter { row in
            words.allSatisfy { row.search.contains($0) } && (!input.onlyDifferences || comparison == nil || row.differs)
        }

        let grid = Self.grid(savedContexts, template: live, environment: key)
        let page = EvaluatePage(
            action: base + "/evaluate",
            saveAction: base + "/evaluate/contexts",
            deleteAction: base + "/evaluate/contexts/delete",
            csrf: session.csrfToken,
            fields: fields.formFields(errors: parsed.errors),
            signals: fields.signalsField(error: parsed.errors["signals"]),
            hasErrors: !parsed.errors.isEmpty,
            errorCount: parsed.errors.count,
            saved: savedContexts.map {
                EvaluatePage.Saved(
                    name: $0.name,
                    selected: $0.name == input.saved,
                    summary: EvaluationContextFields.summary($0.context)
                )
            },
            hasSaved: !savedContexts.isEmpty,
            savedName: input.saved,
            compareOptions: compareOptions,
            compare: comparison == nil ? "" : input.compare,
            comparing: comparison != nil,
            compareLabel: comparison?.label ?? "",
            baseLabel: "\(environment.name) (live)",
            query: input.query,
            onlyDifferences: input.onlyDifferences,
            rows: shown,
            shown: shown.count,
            total: total,
            differing: differing,
            contextSummary: parsed.context.map { EvaluationContextFields.summary($0.json()) } ?? "",
            canSave: principal.permits(.publish(key)),
            saveName: saveName.isEmpty ? input.saved : saveName,
            saveError: saveError,
            compareError: compareError,
            version: environment.templateVersion,
            gridKeys: grid.keys,
            gridRows: grid.rows,
            hasGrid: !grid.rows.isEmpty
        )
        var chrome = try await environmentChrome(
            title: "Who gets what",
            user: user,
            project: project,
            environment: environment,
            tab: "evaluate"
        )
        chrome.flash = flash
        return renderer.render(.evaluate, chrome: chrome, page: page, context: context, status: status)
    }
}

extension EvaluateController {
    /// The saved contexts × flags grid over `template`: the values apps get, one row per saved
    /// context that reads as a context (at most 50 rows and 50 flags, so the page stays a page).
    static func grid(
        _ saved: [SavedContext],
        template: ConfigTemplate,
        environment: EnvironmentKey
    ) -> (keys: [GridKey], rows: [GridRow]) {
        guard !saved.isEmpty, let compiled = try? CompiledTemplate(template) else { return ([], []) }
        let keys = Array(compiled.keys.prefix(50))
        let rows = saved.prefix(50).compactMap { context -> GridRow? in
            guard let evaluation = try? EvaluationContext(json: context.context) else { return nil }
            let result = compiled.evaluate(evaluation)
            return GridRow(
                name: context.name,
                values: keys.map { key in
                    guard let value = result[key] else { return "(in-app default)" }
                    let text = value.stringValue
                    return text.count > 60 ? String(text.prefix(60)) + "…" : text
                }
            )
        }
        return (keys.map { GridKey(key: $0, href: ConsolePaths.flagEditor(environment, key: $0)) }, rows)
    }
}

/// The rules for a saved context's name.
enum SavedContextName {
    /// The longest name, in characters.
    static let maximumLength = 100
}

/// The rows of the "Who gets what" table: ``ContextEvaluation`` (the API's rule) in words.
enum EvaluationTable {
    /// Every key of `template` (in template order), then those only `other` has.
    /// - Throws: ``TemplateCompilationError`` when a template does not compile.
    static func rows(
        context: EvaluationContext,
        template: ConfigTemplate,
        comparedWith other: ConfigTemplate?,
        environment: EnvironmentKey,
        at now: Date = Date()
    ) throws(TemplateCompilationError) -> [EvaluateController.EvaluatePage.Row] {
        let states = try ConditionStates(context: context, template: template, at: now)
        return try ContextEvaluation.rows(context: context, template: template, comparedWith: other, at: now).map {
            row in
            let parameter = template.parameter(forKey: row.key)
            let cells = parameter.map { conditionCells($0, template: template, states: states) } ?? []
            let mine = Side(row.outcome)
            let theirs = row.other.map(Side.init)
            let search = [row.key, row.title ?? "", mine.value, mine.condition ?? "", theirs?.value ?? ""]
                .joined(separator: " ").lowercased()
            return EvaluateController.EvaluatePage.Row(
                key: row.key,
                editHref: parameter == nil ? nil : ConsolePaths.flagEditor(environment, key: row.key),
                title: row.title,
                value: mine.value,
                source: mine.source,
                reason: mine.reason,
                condition: mine.condition,
                expression: mine.expression,
                compareValue: theirs?.value ?? "",
                compareSource: theirs?.source ?? "",
                compareReason: theirs?.reason ?? "",
                compareCondition: theirs?.condition,
                differs: row.differs,
                search: search,
                conditions: cells,
                hasConditions: !cells.isEmpty
            )
        }
    }

    /// A flag's conditions in words, with the context's percent buckets.
    static func conditionCells(
        _ parameter: TemplateParameter,
        template: ConfigTemplate,
        states: ConditionStates
    ) -> [EvaluateController.EvaluatePage.ConditionCell] {
        states.states(of: parameter, in: template).map {
            (condition, state) -> EvaluateController.EvaluatePage.ConditionCell in
            let buckets = (states.percents[condition] ?? []).map { reading in
                let seed = reading.seed.isEmpty ? "" : " (seed \(reading.seed))"
                return "bucket \(reading.percentText)\(seed): \(reading.inRange ? "in range" : "out of range")"
            }
            switch state {
            case .matched:
                return .init(name: condition, state: "Matched", stateClass: "matched", note: nil, buckets: buckets)
            case .notMatched:
                return .init(
                    name: condition,
                    state: "Not matched",
                    stateClass: "not-matched",
                    note: nil,
                    buckets: buckets
                )
            case .shadowed(let by):
                return .init(
                    name: condition,
                    state: "Shadowed",
                    stateClass: "shadowed",
                    note: "matches, but \(by) comes first",
                    buckets: buckets
                )
            }
        }
    }

    /// One side of a row in words.
    struct Side {
        var value: String
        var source: String
        var reason: String
        var condition: String?
        var expression: String?

        init(_ outcome: ContextEvaluation.Outcome) {
            guard let explanation = outcome.explanation else {
                value = "(not in this template)"
                source = "no value"
                reason = "notInTemplate"
                return
            }
            value = explanation.value.map { $0.count > 300 ? String($0.prefix(300)) + "…" : $0 } ?? "(no value)"
            reason = explanation.reason.rawValue
            switch explanation.reason {
            case .defaultValue: source = "default"
            case .conditionalValue: source = "conditional"
            case .useInAppDefault, .managedValue: source = "in-app default"
            case .noDefaultValue, .notInTemplate: source = "no value"
            }
            if explanation.reason == .useInAppDefault || explanation.reason == .managedValue {
                value = "(in-app default)"
            }
            condition = explanation.condition
            expression = outcome.expression
        }
    }
}

/// The context form's fields as typed: the randomization id, the attributes the condition
/// grammar's built-in elements read, and custom signals as `name=value` lines. Turns them into
/// an ``EvaluationContext`` (through ``EvaluationContext/init(json:at:)``, the evaluation API's
/// reader) or says, per field, what was expected.
struct EvaluationContextFields: Sendable, Hashable {
    var id = ""
    var country = ""
    var language = ""
    var os = ""
    var appId = ""
    var version = ""
    var signals = ""

    /// The form's input names and the attributes they set.
    static let attributeFields: [(name: String, attribute: ConditionElement)] = [
        ("country", .deviceCountry), ("language", .deviceLanguage), ("os", .deviceOS), ("app", .appId),
        ("version", .appVersion),
    ]

    init() {}

    /// Reads the fields by input name.
    init(value: (String) -> String?) {
        func text(_ name: String) -> String { value(name)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "" }
        id = text("id")
        country = text("country")
        language = text("language")
        os = text("os")
        appId = text("app")
        version = text("version")
        signals = text("signals")
    }

    /// The fields that give a saved context (JSON in the evaluation API's shape): built-in string
    /// attributes into their fields, everything else into `name=value` lines.
    init(json: JSONValue) {
        guard case .object(let object) = json else { return }
        var lines: [String] = []
        for member in object {
            if EvaluationContext.randomizationIdKeys.contains(member.key), case .string(let id) = member.value {
                self.id = id
                continue
            }
            if case .string(let text) = member.value,
                let field = Self.attributeFields.first(where: { $0.attribute.rawValue == member.key })
            {
                set(field.name, text)
                continue
            }
            lines.append(member.key + "=" + Self.signalText(member.value))
        }
        signals = lines.joined(separator: "\n")
    }

    private mutating func set(_ name: String, _ text: String) {
        switch name {
        case "country": country = text
        case "language": language = text
        case "os": os = text
        case "app": appId = text
        case "version": version = text
        default: break
        }
    }

    private func value(of name: String) -> String {
        switch name {
        case "country": return country
        case "language": return language
        case "os": return os
        case "app": return appId
        case "version": return version
        default: return ""
        }
    }

    /// A signal's value as a line writes it: a string as itself unless it would read as
    /// something else (then quoted as JSON); anything else as JSON.
    static func signalText(_ value: JSONValue) -> String {
        if case .string(let text) = value {
            return signalValue(text).map { $0 == value } == true ? text : value.serialized()
        }
        return value.serialized()
    }

    /// How a line's value reads: JSON when it is JSON (`12`, `true`, `["a","b"]`, `"quoted"`),
    /// else the text itself. Nil for text that starts like JSON but is not.
    static func signalValue(_ text: String) -> JSONValue? {
        if let json = try? JSONValue.parse(text) { return json }
        if let first = text.first, "[{\"".contains(first) { return nil }
        return .string(text)
    }

    /// The context, or what is wrong with each field (by input name).
    func parse() -> (context: EvaluationContext?, errors: [String: String]) {
        var errors: [String: String] = [:]
        var object = JSONObject()
        var signalErrors: [String] = []
        let lines = signals.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            let number = index + 1
            guard let equals = line.firstIndex(of: "=") else {
                signalErrors.append("line \(number): expected name=value, such as plan=pro")
                continue
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let text = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else {
                signalErrors.append("line \(number): the name before = is missing")
                continue
            }
            if let problem = Self.unknownAttribute(name) {
                signalErrors.append("line \(number): \(problem)")
                continue
            }
            guard let value = Self.signalValue(text) else {
                signalErrors.append(
                    "line \(number): \(name)'s value is not valid JSON; write a list as [\"a\", \"b\"], "
                        + "or plain text without quotes"
                )
                continue
            }
            do {
                _ = try EvaluationContext(json: .object([name: value]))
            } catch {
                let message = error.issues.first?.message ?? "not a value an attribute can have"
                signalErrors.append("line \(number): \(name): \(message)")
                continue
            }
            object[name] = value
        }
        if !signalErrors.isEmpty { errors["signals"] = signalErrors.joined(separator: "; ") }
        if !country.isEmpty, !Self.matches(country, #"^[A-Za-z]{2}$"#) {
            errors["country"] = "expected a two-letter country code (ISO 3166-1), such as DE or AT"
        }
        if !language.isEmpty, !Self.matches(language, #"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$"#) {
            errors["language"] = "expected a language tag, such as de, en-US or pt_BR"
        }
        if !os.isEmpty, !Self.matches(os, #"^[A-Za-z0-9._-]+$"#) {
            errors["os"] = "expected a platform name, such as ios, android, macos or web"
        }
        if !version.isEmpty, !Self.matches(version, #"^[0-9]+(\.[0-9]+){0,4}$"#) {
            errors["version"] = "expected a version such as 2.1.0: one to five numbers separated by dots"
        }
        guard errors.isEmpty else { return (nil, errors) }
        if !id.isEmpty { object["randomizationId"] = .string(id) }
        for field in Self.attributeFields {
            let text = value(of: field.name)
            if !text.isEmpty { object[field.attribute.rawValue] = .string(text) }
        }
        do {
            return (try EvaluationContext(json: .object(object)), [:])
        } catch {
            return (nil, ["signals": error.issues.map(\.message).joined(separator: "; ")])
        }
    }

    /// Why `name` cannot be a custom signal, or nil when it can: a dotted `app.` or `device.`
    /// name that is no element of the condition language.
    static func unknownAttribute(_ name: String) -> String? {
        guard name.hasPrefix("app.") || name.hasPrefix("device."),
            ConditionElement(rawValue: name) == nil
        else { return nil }
        let known = ConditionElement.allCases.map(\.rawValue).joined(separator: ", ")
        return "unknown attribute \u{201C}\(name)\u{201D}: expected a custom signal's plain name (plan, seats) "
            + "or one of \(known)"
    }

    private static func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }

    /// The single-line inputs, with their errors.
    func formFields(errors: [String: String]) -> [EvaluateController.EvaluatePage.Field] {
        [
            ("id", "Randomization id", id, "the id percent conditions bucket (randomizationId)", "user-42"),
            ("country", "Country", country, "device.country, two letters", "DE"),
            ("language", "Language", language, "device.language", "de-DE"),
            ("os", "Platform", os, "device.os", "ios"),
            ("app", "App id", appId, "app.id", "1:123:ios:abc"),
            ("version", "App version", version, "app.version", "2.1.0"),
        ].map { name, label, value, hint, placeholder in
            EvaluateController.EvaluatePage.Field(
                id: "context-" + name,
                name: name,
                label: label,
                value: value,
                hint: hint,
                placeholder: placeholder,
                error: errors[name]
            )
        }
    }

    /// The custom signals box, with its error.
    func signalsField(error: String?) -> EvaluateController.EvaluatePage.Field {
        EvaluateController.EvaluatePage.Field(
            id: "context-signals",
            name: "signals",
            label: "Custom signals",
            value: signals,
            hint: "one name=value per line: plan=pro, seats=12, beta=true, app.audiences=[\"Purchasers\"]",
            placeholder: "plan=pro",
            error: error
        )
    }

    /// `randomizationId=user-42, device.country=DE, plan=pro`: a context on one line.
    static func summary(_ json: JSONValue) -> String {
        guard case .object(let object) = json, object.count > 0 else { return "no id, no attributes" }
        var parts: [String] = []
        for member in object { parts.append(member.key + "=" + signalText(member.value)) }
        let text = parts.joined(separator: ", ")
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
