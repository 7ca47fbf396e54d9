import Hummingbird
import Logging
import VaneAuthoring
import VaneCore
import VaneServerCore

/// The flags of an environment, and the kill switch of Boolean flags.
struct FlagsController: DraftPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let analyses: DraftAnalysisCache
    let renderer: ConsolePageRenderer

    /// The kill switch, as the API throws it.
    var switching: FlagSwitching { FlagSwitching(store: store, publisher: publisher) }

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("flags", use: flags)
        routes.environmentEditor.get("flags/:key/switch", use: switchPage)
        routes.environmentEditor.post("flags/:key/switch", use: switchFlag)
        routes.environmentEditor.get("flags/new", use: newFlagPage)
        routes.environmentEditor.post("flags/new", use: saveNewFlag)
        routes.environment.get("flags/:key/edit", use: editFlagPage)
        routes.environmentEditor.post("flags/:key/edit", use: saveFlag)
        routes.environmentEditor.post("flags/:key/delete", use: deleteFlag)
        registerCopy(on: routes)
    }

    struct FlagsPage: Sendable {
        typealias Option = SelectOption

        struct Row: Sendable {
            var key: String
            var title: String?
            var type: String
            var value: String
            var conditionalCount: Int
            var realtime: Bool
            var category: String
            var lastChange: String?
            var lastChangeTime: Int64
            var search: String
            var switchable: Bool
            var stateLabel: String
            var stateClass: String
            var switchLabel: String
            var switchHref: String
            var canPublish: Bool
            var editHref: String
            /// The chooser of where to copy the flag, for people who may publish elsewhere.
            var copyHref: String?
            /// "changed" or "removed" when the person's draft does that to the flag.
            var draftMark: String?
            /// The page of the rollout the flag is under (a draft, running or paused one), and its id.
            var rolloutHref: String? = nil
            var rolloutId: String? = nil
        }

        struct AddedFlag: Sendable {
            var key: String
            var editHref: String
        }

        var action: String
        var query: String
        var categories: [Option]
        var sorts: [Option]
        /// Where the table rows go: ``ConsolePageRenderer/Spliced/marker``.
        var rowsHTML = ConsolePageRenderer.Spliced.marker
        var hasRows: Bool
        var shown: Int
        var total: Int
        var version: Int64
        var canPublish: Bool
        var newHref: String
        var draftAdded: [AddedFlag]
        /// The filter form starts open only when a filter is in use; the script opens it on wide
        /// screens, so a phone without script still shows flags on its first screen.
        var filtersOpen: Bool
    }

    @Sendable func flags(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let live = try await liveVersion(key)
        let template = live.template
        let fields = ConsoleForm.query(request)
        let query = fields["q"] ?? ""
        let category = fields["category"] ?? ""
        let sort = fields["sort"] ?? "key"
        let canPublish = principal.permits(.publish(key))
        let canCopy = try await !otherEnvironments(of: key, principal: principal).isEmpty
        let changes = try await lastChanges(key)
        let rollouts = try await RolloutsController.rolloutsByFlag(RolloutStore(engine: store.engine), key)
        let base = ConsolePaths.environment(key)
        // What the person's draft does to these flags, marked beside the live values.
        let draftDiff = try await drafts.draft(key, userId: user.id).map {
            analyses.diff(of: $0, live: template, liveVersion: live.number)
        }
        let draftChanged = Set(draftDiff?.changedParameters ?? [])
        let draftRemoved = Set(draftDiff?.removedParameters ?? [])
        var rows: [FlagsPage.Row] = []
        var categories = Set<String>()
        let words = query.lowercased().split(whereSeparator: { $0.isWhitespace })
        // `allParameters` concatenates: read it once.
        let parameters = template.allParameters
        for parameter in parameters {
            let metadata = parameter.keyMetadata
            if let category = metadata.category { categories.insert(category) }
            let search = [parameter.key, metadata.title ?? "", metadata.description ?? "", metadata.category ?? ""]
                .joined(separator: " ").lowercased()
            guard words.allSatisfy({ search.contains($0) }) else { continue }
            guard category.isEmpty || metadata.category == category else { continue }
            let switchable = KillSwitch.applies(to: parameter)
            let (trues, all) = switchable ? KillSwitch.trueCount(parameter) : (0, 0)
            let change = changes[parameter.key]
            let flagPath = "\(base)/flags/\(ConsolePaths.encode(parameter.key))"
            rows.append(
                FlagsPage.Row(
                    key: parameter.key,
                    title: metadata.title,
                    type: (parameter.valueType ?? .string).rawValue.lowercased(),
                    value: Self.shortValue(parameter.defaultValue),
                    conditionalCount: parameter.conditionalValues.count,
                    realtime: metadata.realtime,
                    category: metadata.category ?? "",
                    lastChange: change?.text,
                    lastChangeTime: change?.time ?? 0,
                    search: search,
                    switchable: switchable,
                    stateLabel: trues == 0 ? "Off" : (trues == all ? "On" : "On for some"),
                    stateClass: trues == 0 ? "off" : "on",
                    switchLabel: trues == 0 ? "Turn on" : "Turn off",
                    switchHref: "\(flagPath)/switch?to=\(trues == 0 ? "on" : "off")",
                    canPublish: canPublish,
                    editHref: "\(flagPath)/edit",
                    copyHref: canCopy ? "\(flagPath)/copy" : nil,
                    draftMark: draftChanged.contains(parameter.key)
                        ? "changed" : (draftRemoved.contains(parameter.key) ? "removed" : nil),
                    rolloutHref: rollouts[parameter.key].map { RolloutsController.path(key, $0.id) },
                    rolloutId: rollouts[parameter.key]?.id
                )
            )
        }
        switch sort {
        case "category": rows.sort { ($0.category, $0.key) < ($1.category, $1.key) }
        case "changed": rows.sort { ($0.lastChangeTime, $1.key) > ($1.lastChangeTime, $0.key) }
        case "type": rows.sort { ($0.type, $0.key) < ($1.type, $1.key) }
        default: rows.sort { $0.key < $1.key }
        }
        let sorts = [("key", "Key"), ("category", "Category"), ("changed", "Last change"), ("type", "Type")].map {
            FlagsPage.Option(value: $0.0, label: $0.1, selected: $0.0 == sort)
        }
        let page = FlagsPage(
            action: base + "/flags",
            query: query,
            categories: categories.sorted().map { FlagsPage.Option(value: $0, label: $0, selected: $0 == category) },
            sorts: sorts,
            hasRows: !rows.isEmpty,
            shown: rows.count,
            total: parameters.count,
            version: environment.templateVersion,
            canPublish: canPublish,
            newHref: "\(base)/flags/new",
            draftAdded: (draftDiff?.addedParameters ?? []).map {
                FlagsPage.AddedFlag(key: $0, editHref: "\(base)/flags/\(ConsolePaths.encode($0))/edit")
            },
            filtersOpen: !query.isEmpty || !category.isEmpty || fields["sort"] != nil
        )
        var chrome = try await environmentChrome(
            title: "Flags",
            user: user,
            project: project,
            environment: environment,
            tab: "flags"
        )
        if let published = request.uri.queryParameters.get("published").flatMap({ Int64($0) }) {
            chrome.flash = .ok("Published version \(published).")
        }
        return renderer.render(
            .flags,
            chrome: chrome,
            page: page,
            context: context,
            spliced: ConsolePageRenderer.Spliced(bytes: FlagRowsHTML.html(rows))
        )
    }

    /// The newest change to each key among the environment's last 300 audit entries:
    /// "version 12 · alice@example.com · 2026-11-23 09:41 UTC".
    func lastChanges(_ environment: EnvironmentKey) async throws -> [String: (text: String, time: Int64)] {
        let page = try await store.audit(
            projectId: environment.projectId,
            environmentId: environment.environmentId,
            pageSize: 300,
            pageToken: nil
        )
        var changes: [String: (text: String, time: Int64)] = [:]
        for entry in page.items where entry.action.hasPrefix("template.") {
            guard case .object(let details) = entry.details, case .object(let diff)? = details["changes"],
                case .object(let parameters)? = diff["parameters"]
            else { continue }
            var version = ""
            if case .string(let number)? = details["versionNumber"] { version = "version \(number) · " }
            let text = "\(version)\(entry.actor.name) · \(Self.displayTime(entry.time))"
            for list in ["added", "changed"] {
                guard case .array(let keys)? = parameters[list] else { continue }
                for case .string(let key) in keys where changes[key] == nil { changes[key] = (text, entry.time) }
            }
        }
        return changes
    }

    // MARK: Kill switch

    struct SwitchPage: Sendable {
        struct Change: Sendable {
            var label: String
            var before: String
            var after: String
        }

        var key: String
        var verb: String
        var to: String
        var environment: String
        var version: Int64
        var nextVersion: Int64
        var realtime: Bool
        var changes: [Change]
        var action: String
        var back: String
        var csrf: String
        var buttonClass: String
        var message: String
        var error: String?
    }

    /// What a kill switch would publish, and the page that asks for confirmation.
    struct SwitchPlan {
        var page: SwitchPage
        var plan: FlagSwitching.Plan
        var chrome: ConsoleChrome
        var principal: Principal
    }

    /// The flag's switch planned by ``FlagSwitching`` (the API's rule) and the page that asks for
    /// confirmation; the person, the environment and the template are read once here for both
    /// the page and the publish.
    func switchPlan(_ request: Request, context: VaneRequestContext, to: String) async throws -> SwitchPlan {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        guard let flagKey = context.parameters.get("key") else { throw ConsolePageError.notFound("no flag named") }
        let plan: FlagSwitching.Plan
        do {
            plan = try await switching.plan(key, flag: flagKey, to: try FlagSwitching.Position(to))
        } catch let refusal as FlagSwitchRefusal {
            if case .noSuchFlag = refusal { throw ConsolePageError.notFound(refusal.description) }
            throw ConsolePageError.badRequest(refusal.description)
        }
        let changes = plan.changes.map {
            SwitchPage.Change(
                label: $0.condition.map { "If \($0)" } ?? "Everyone else",
                before: $0.condition == nil || $0.before != nil ? Self.shortValue($0.before) : "(none)",
                after: $0.condition == nil || $0.after != nil ? Self.shortValue($0.after) : "(none)"
            )
        }
        let base = ConsolePaths.environment(key)
        let page = SwitchPage(
            key: flagKey,
            verb: to == "off" ? "Turn off" : "Turn on",
            to: to,
            environment: "\(key)",
            version: plan.version,
            nextVersion: plan.version + 1,
            realtime: plan.realtime,
            changes: changes,
            action: "\(base)/flags/\(ConsolePaths.encode(flagKey))/switch",
            back: "\(base)/flags",
            csrf: session.csrfToken,
            buttonClass: to == "off" ? "danger" : "primary",
            message: "",
            error: nil
        )
        let chrome = try await environmentChrome(
            title: page.verb,
            user: user,
            project: project,
            environment: environment,
            tab: "flags"
        )
        return SwitchPlan(page: page, plan: plan, chrome: chrome, principal: principal)
    }

    @Sendable func switchPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let to = request.uri.queryParameters.get("to").map { String($0) } ?? ""
        let plan = try await switchPlan(request, context: context, to: to)
        return renderer.render(.flagSwitch, chrome: plan.chrome, page: plan.page, context: context)
    }

    @Sendable func switchFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let form = try await ConsoleForm.read(request, context: context)
        var plan = try await switchPlan(request, context: context, to: form.text("to") ?? "")
        func again(_ error: String) -> Response {
            plan.page.error = error
            plan.page.message = form.text("message") ?? ""
            return renderer.render(
                .flagSwitch,
                chrome: plan.chrome,
                page: plan.page,
                context: context,
                status: .badRequest
            )
        }
        guard let seen = form.text("version").flatMap(Int64.init), seen == plan.page.version else {
            return again(
                "someone published version \(plan.page.version) since you opened this page; check the change below and confirm again"
            )
        }
        do {
            let (version, _) = try await switching.publish(
                plan.plan,
                message: form.text("message") ?? "",
                seenVersion: seen,
                actor: plan.principal.actor
            )
            context.logger.info(
                "kill switch",
                metadata: ["flag": "\(plan.page.key)", "to": "\(plan.page.to)", "version": "\(version)"]
            )
            throw ConsoleRedirect(
                location: ConsolePaths.environment(plan.plan.environment) + "/flags?published=\(version)"
            )
        } catch let error as FlagSwitchRefusal {
            return again(error.description)
        } catch let error as PublishError {
            return again(ConsolePublishing.message(error))
        }
    }
}

/// Publishing refusals, in words for the console.
enum ConsolePublishing {
    static func message(_ error: PublishError) -> String {
        switch error {
        case .invalid(let issues):
            let errors = issues.filter { $0.severity == .error }
            return "the template has \(errors.count) problem(s): "
                + errors.prefix(5).map { "\($0.path): \($0.message)" }.joined(separator: "; ")
        case .doesNotCompile(let error): return "a condition does not compile: \(error)"
        case .storage(let error): return error.description
        case .invalidRollback(let message): return message
        case .changeRefused(let refusal): return refusal.description
        }
    }
}
